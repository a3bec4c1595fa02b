import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export interface EmbeddedDatabase {
  url: string;
  dataPath: string;
  stop(): Promise<void>;
}

/**
 * With no DATABASE_URL, the API runs PostgreSQL in-process: PGlite (PostgreSQL compiled to WASM)
 * served over the real wire protocol by pglite-socket, so the very same `pg` driver, TypeORM setup
 * and migrations run as in production. pglite-socket multiplexes many client connections onto the
 * one PGlite session and keeps a connection exclusive while it is inside a transaction.
 *
 * This is a development convenience for a single process; production sets DATABASE_URL.
 */
export async function startEmbeddedDatabase(options: {
  dataDir: string;
  port: number;
  maxConnections: number;
}): Promise<EmbeddedDatabase> {
  const { PGlite, PGLiteSocketServer } = await loadPglite();
  const dataPath = join(options.dataDir, 'pglite');
  mkdirSync(dataPath, { recursive: true });
  const db = await PGlite.create(dataPath);
  const server = new PGLiteSocketServer({
    db,
    host: '127.0.0.1',
    port: options.port,
    maxConnections: options.maxConnections,
  });
  await server.start();
  const url = `postgresql://postgres@${server.getServerConn()}/postgres?sslmode=disable`;
  return {
    url,
    dataPath,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

/**
 * Both packages are development dependencies, ESM-first, loaded only here: production never pays for the WASM
 * module, and the container image, which leaves development dependencies out, does not hold them at all.
 */
async function loadPglite() {
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
    return { PGlite, PGLiteSocketServer };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      'DATABASE_URL is not set, and the embedded database it would start instead is a development convenience ' +
        'whose packages are not installed here (the container image and `npm ci --omit=dev` leave them out): ' +
        'set DATABASE_URL to your PostgreSQL.',
      { cause: error },
    );
  }
}
