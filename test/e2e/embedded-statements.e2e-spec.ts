import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../src/platform/config/config';
import { createDataSource } from '../../src/platform/database/data-source';
import { EmbeddedDatabase, startEmbeddedDatabase } from '../../src/platform/database/embedded';
import { Sql } from '../../src/platform/database/sql';
import { testTempDir } from '../support/temp-data-dir';

/**
 * PGlite is one session that pglite-socket lends to every client connection: a named statement one
 * connection prepared is there for the next, whose Parse of the same name then fails ("prepared
 * statement … already exists"). A queued forward in embedded mode once ended `internal-error` on it.
 */
describe('Sql on the embedded database: several connections, one session', () => {
  let embedded: EmbeddedDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    embedded = await startEmbeddedDatabase({ dataDir: testTempDir('vf-embedded-sql-'), port: 0, maxConnections: 8 });
    dataSource = createDataSource({ url: embedded.url, poolSize: 4 });
    await dataSource.initialize();
  }, 60_000);

  afterAll(async () => {
    await dataSource?.destroy();
    await embedded?.stop();
  });

  it('runs the same statement on several connections at once (unnamed, as behind a transaction pooler)', async () => {
    const config = {
      databaseUrl: null,
      database: { transactionPooling: false, directUrl: null },
    } as unknown as AppConfig;
    const sql = new Sql(dataSource, config);
    // Concurrent calls take several of the pool's connections; each would Parse the same name.
    const rows = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        sql.prepared<{ n: number }>('embedded.same-name', 'SELECT $1::int AS n, pg_sleep(0.02)', [i]),
      ),
    );
    expect(rows.map((r) => r[0].n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});
