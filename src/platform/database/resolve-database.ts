import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppConfig } from '../config/config';
import { alive, EmbeddedDatabase, startEmbeddedDatabase } from './embedded';

interface ResolvedDatabase {
  url: string;
  /** Set when this process started the embedded database (and must stop it). */
  embedded?: EmbeddedDatabase;
}

function runtimeFile(dataDir: string): string {
  return join(dataDir, 'embedded-database.json');
}

/** The embedded server another local process (a running `npm start`) is serving, if any. */
function runningEmbedded(dataDir: string): string | null {
  try {
    const { url, pid } = JSON.parse(readFileSync(runtimeFile(dataDir), 'utf8')) as { url: string; pid: number };
    return pid !== process.pid && alive(pid) ? url : null;
  } catch {
    return null;
  }
}

/**
 * DATABASE_URL when set. Otherwise the embedded PostgreSQL under DATA_DIR: the API starts it and
 * advertises its address in DATA_DIR so the CLI can talk to the same server while it runs (one server per
 * cluster directory); with no API running, the CLI starts it for its own run and stops it after.
 */
export async function resolveDatabase(config: AppConfig, role: 'api' | 'cli'): Promise<ResolvedDatabase> {
  if (config.databaseUrl) return { url: config.databaseUrl };
  const running = runningEmbedded(config.dataDir);
  if (running) {
    if (role === 'cli') return { url: running };
    throw new Error(
      `another process already serves the embedded database in ${config.dataDir}; stop it or set DATABASE_URL`,
    );
  }
  const embedded = await startEmbeddedDatabase({ dataDir: config.dataDir, port: config.embeddedDatabasePort });
  if (role === 'api') {
    const file = runtimeFile(config.dataDir);
    writeFileSync(file, JSON.stringify({ url: embedded.url, pid: process.pid }), { mode: 0o600 });
    const stop = embedded.stop.bind(embedded);
    embedded.stop = async () => {
      rmSync(file, { force: true });
      await stop();
    };
  }
  return { url: embedded.url, embedded };
}
