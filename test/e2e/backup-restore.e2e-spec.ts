import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { cardNumber } from '../factories/cards';
import { createMerchantWithConfig, MerchantWithToken } from '../factories/forwarding-merchants';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectProblem, http } from '../support/http';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { EntryPoint, startEntryPoint } from '../support/entry-point';
import { testTempDir } from '../support/temp-data-dir';
import { entryPointEnv, startTestApp, TEST_MASTER_KEY_1 } from '../support/test-app';
import { testPostgresAdminUrl } from '../support/test-services';

/*
 * Issue 48, item 6: backup and restore as docs/operations.md ("Backup and restore") tells an operator to do them.
 * A card stored and a config made; the database dumped with Debian's pg_dump (-Fc), dropped, made again and
 * restored with pg_restore; `migrate status` finds nothing pending; the API started again with the same master
 * keys (the compiled API, as `npm start` runs it) forwards the card stored before the dump, its number arriving
 * whole at a real stand-in server. Restored with another master key, the card is a clear 503 problem naming it,
 * nothing is sent, and the log says which key (decision 0151).
 */

const run = promisify(execFile);

/**
 * Debian's client binaries (pg_dump, pg_restore) for the run's server: its major version's, or the newest installed
 * above it (pg_dump reads older servers, never newer ones).
 */
async function postgresBin(adminUrl: string): Promise<string> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  const major = Math.floor(Number((await client.query('SHOW server_version_num')).rows[0].server_version_num) / 10_000);
  await client.end();
  const root = '/usr/lib/postgresql';
  const installed = existsSync(root)
    ? readdirSync(root)
        .map(Number)
        .filter((v) => v >= major)
    : [];
  const exact = installed.includes(major) ? major : Math.max(...installed);
  if (!Number.isFinite(exact) || !existsSync(join(root, String(exact), 'bin', 'pg_dump')))
    throw new Error(
      `no pg_dump for PostgreSQL ${major} or newer under ${root} (apt-get install postgresql-client-${major})`,
    );
  return join(root, String(exact), 'bin');
}

/** One statement on the run's server as its administrator (CREATE and DROP DATABASE). */
async function asAdmin(sql: string): Promise<void> {
  const client = new Client({ connectionString: testPostgresAdminUrl() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** `npm run cli -- migrate status` as an operator runs it after a restore: its exit code and JSON. */
async function migrateStatus(databaseUrl: string): Promise<{ code: number; status: Record<string, unknown[]> }> {
  const env = entryPointEnv({ DATABASE_URL: databaseUrl });
  const done = await run(process.execPath, ['dist/cli/main.js', 'migrate', 'status'], { env, timeout: 60_000 }).then(
    (out) => ({ code: 0, stdout: out.stdout }),
    (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, stdout: error.stdout ?? '' }),
  );
  return { code: done.code, status: JSON.parse(done.stdout) };
}

/** The messages of the API's JSON log lines. */
function logged(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => (JSON.parse(line) as { msg: string }).msg);
}

/** A master key with the id of the one the data was sealed under and other bytes: another environment's, say. */
const OTHER_KEY_SAME_ID = `test-k1:${Buffer.alloc(32, 7).toString('base64')}`;
/** A master key of another id altogether. */
const OTHER_KEY_OTHER_ID = `restored-elsewhere:${Buffer.alloc(32, 8).toString('base64')}`;

describe('Backup and restore: the database and its master keys together', () => {
  let database: IsolatedDatabase;
  let stand: Downstream;
  let api: EntryPoint | undefined;
  let merchant: MerchantWithToken;
  let card: { id: string; number: string };
  const dumpDir = testTempDir('vf-backup-');
  const dump = join(dumpDir, 'vault.dump');
  const env = (masterKeys: string) => ({
    DATABASE_URL: database.url,
    VAULT_MASTER_KEYS: masterKeys,
    FORWARD_INSECURE_HOSTS: '127.0.0.1',
  });

  /** The compiled API on the restored database with `masterKeys`: its URL once it listens. */
  async function startApi(masterKeys: string): Promise<string> {
    api = startEntryPoint('dist/main.js', {
      env: entryPointEnv({ ...env(masterKeys), PORT: '0' }),
      ready: /API listening on (http:\/\/[^\s]+) /,
    });
    return (await api.started)[1];
  }

  async function stopApi(): Promise<void> {
    api?.child.kill('SIGTERM');
    await api?.exited;
    api = undefined;
  }

  const forward = (url: string) =>
    http(url, '/vault-forward', {
      method: 'POST',
      token: merchant.token,
      headers: {
        'x-vault-forward-url': `${stand.url}/charge`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card.id,
        'content-type': 'application/json',
      },
      rawBody: '{"number":"{{ CARD_NUMBER_1 }}","expiry":"{{ CARD_EXPIRATION_DATE_1 }}"}',
    });

  beforeAll(async () => {
    database = await createIsolatedDatabase('backup');
    stand = await startHttpDownstream();
    const app = await startTestApp({ env: env(TEST_MASTER_KEY_1) });
    merchant = await createMerchantWithConfig(app, stand.port, 'backed up');
    const number = cardNumber();
    const stored = await http(app.url, '/payment-methods', {
      method: 'POST',
      token: merchant.token,
      body: { method: 'card', number, expiration_date: '11/31' },
    });
    expect(stored.status).toBe(201);
    card = { id: stored.body.id, number };
    await app.close();
  }, 120_000);

  afterAll(async () => {
    await stopApi();
    await stand?.close();
    await database?.drop();
  }, 60_000);

  it('dumped, wiped and restored: migrations all applied, and the card stored before the dump forwards whole', async () => {
    const bin = await postgresBin(testPostgresAdminUrl());
    await run(join(bin, 'pg_dump'), ['--format=custom', `--file=${dump}`, database.url]);
    const name = new URL(database.url).pathname.slice(1);
    await asAdmin(`DROP DATABASE ${name} WITH (FORCE)`);
    await asAdmin(`CREATE DATABASE ${name}`);
    await run(join(bin, 'pg_restore'), ['--exit-on-error', '--no-owner', `--dbname=${database.url}`, dump]);

    const status = await migrateStatus(database.url);
    expect({ code: status.code, pending: status.status.pending, unknown: status.status.unknown }).toEqual({
      code: 0,
      pending: [],
      unknown: [],
    });

    const url = await startApi(TEST_MASTER_KEY_1);
    expect((await http(url, `/payment-methods/${card.id}`, { token: merchant.token })).body).toMatchObject({
      id: card.id,
      label: card.number.slice(-4),
    });
    const sent = await forward(url);
    expect(sent.status).toBe(200);
    expect(JSON.parse(stand.received.at(-1)!.body.toString('utf8'))).toEqual({ number: card.number, expiry: '11/31' });
    await stopApi();
  }, 120_000);

  it.each([
    ['the same key id with other bytes', OTHER_KEY_SAME_ID, 'the data key does not authenticate for this record'],
    ['another key id', OTHER_KEY_OTHER_ID, 'wrapped by master key "test-k1", which VAULT_MASTER_KEYS does not hold'],
  ])(
    'restored with another master key (%s): a 503 problem naming the card, nothing sent, the log says why',
    async (_, masterKeys, why) => {
      const url = await startApi(masterKeys);
      const before = stand.received.length;
      const refused = await forward(url);
      const problem = expectProblem(refused, 503, 'vault-master-key-mismatch');
      expect(problem.detail).toContain(card.id);
      expect(refused.headers.get('x-vault-forward-error')).toBe('true');
      expect(refused.text).not.toContain(card.number.slice(-12));
      expect(stand.received.length).toBe(before);
      expect(logged(api!.output().stdout)).toContainEqual(expect.stringContaining(`payment method ${card.id}: ${why}`));
      // Storing a card for the merchant needs its fingerprint key, sealed under the same keys: the same problem.
      const store = await http(url, '/payment-methods', {
        method: 'POST',
        token: merchant.token,
        body: { method: 'card', number: cardNumber(), expiration_date: '11/31' },
      });
      expect(expectProblem(store, 503, 'vault-master-key-mismatch').detail).toContain(merchant.id);
      await stopApi();
    },
    60_000,
  );
});
