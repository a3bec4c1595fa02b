import { execFile } from 'node:child_process';
import { Client } from 'pg';
import { MIGRATIONS } from '../../src/platform/database/migrations';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { testDataDir } from '../support/temp-data-dir';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

describe('CLI migrate status: what is applied and pending, changing nothing', () => {
  let db: IsolatedDatabase;

  beforeAll(async () => {
    db = await createIsolatedDatabase('migrate_status', undefined, { migrate: false });
  });
  afterAll(async () => {
    await db?.drop();
  });

  function cli(...args: string[]): Promise<CliResult> {
    return new Promise((resolve) =>
      execFile(
        process.execPath,
        ['dist/cli/main.js', ...args],
        { env: { PATH: process.env.PATH, DATA_DIR: testDataDir(), DATABASE_URL: db.url }, timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      ),
    );
  }

  async function tables(): Promise<string[]> {
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>(
        `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
      );
      return rows.map((r) => r.name);
    } finally {
      await client.end();
    }
  }

  const names = MIGRATIONS.map((m) => m.name);

  // One walk through a database's life: each step needs the one before (a test each would pass only in order).
  it("new database: all pending, exit 1, nothing made; after migrate: all applied, exit 0; a newer build's: unknown", async () => {
    const fresh = await cli('migrate', 'status');
    expect(fresh.code).toBe(1);
    expect(JSON.parse(fresh.stdout)).toEqual({ applied: [], pending: names, unknown: [] });
    expect(await tables()).toEqual([]);

    expect((await cli('migrate')).code).toBe(0);
    const migrated = await cli('migrate', 'status');
    expect(migrated.code).toBe(0);
    const status = JSON.parse(migrated.stdout);
    expect(status.applied.map((m: { name: string }) => m.name)).toEqual(names);
    expect(status).toMatchObject({ pending: [], unknown: [] });

    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query(
        `INSERT INTO schema_migrations (timestamp, name) VALUES (9999999999999, 'FromANewerBuild9999999999999')`,
      );
    } finally {
      await client.end();
    }
    const newer = JSON.parse((await cli('migrate', 'status')).stdout);
    expect(newer).toMatchObject({ pending: [], unknown: ['FromANewerBuild9999999999999'] });
  });

  it('anything after status is a usage error (exit 2)', async () => {
    const result = await cli('migrate', 'status', '--apply');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
  });
});
