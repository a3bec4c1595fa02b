import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SharedCaches } from '../../src/platform/redis/shared-cache';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { http } from '../support/http';
import { ProbeModule } from '../support/probe.module';
import { startTestApp, TEST_MASTER_KEY_1, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';
import { testRedisUrl } from '../support/test-services';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

describe('CLI: api-key list and revoke', () => {
  let t: TestApp;
  let merchant: string;
  // Never the checkout's data/: the CLI may write development secrets there.
  const dataDir = mkdtempSync(join(tmpdir(), 'vf-cli-keys-'));

  /** The compiled CLI, as `npm run --silent cli -- …` runs it, against the run's database (and Redis unless told otherwise). */
  function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ['dist/cli/main.js', ...args],
        {
          env: {
            PATH: process.env.PATH,
            DATABASE_URL: process.env.TEST_DATABASE_URL,
            REDIS_URL: testRedisUrl(),
            DATA_DIR: dataDir,
            VAULT_MASTER_KEYS: TEST_MASTER_KEY_1,
            CURSOR_SECRET: 'test-cursor-secret-not-for-production-0123456789',
            ...env,
          },
          timeout: 30_000,
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
  }

  function json(result: CliResult): Record<string, any> {
    expect({ code: result.code, stderr: result.code === 0 ? '' : result.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    return JSON.parse(lines[0]);
  }

  beforeAll(async () => {
    t = await startTestApp({ imports: [ProbeModule] });
    merchant = (await createMerchantAccount(t)).id;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists every key of a merchant account, newest first, and every key without --merchant', async () => {
    const older = await createApiKey(t, merchant, 'ES256');
    const newer = await createApiKey(t, merchant);
    const instance = await createApiKey(t, null);

    const { items } = json(await cli(['api-key', 'list', '--merchant', merchant]));
    expect(items).toEqual([
      {
        type: 'api-key',
        id: newer.id,
        merchant_account_id: merchant,
        algorithm: 'ES512',
        created_at: expect.any(String),
        revoked_at: null,
      },
      {
        type: 'api-key',
        id: older.id,
        merchant_account_id: merchant,
        algorithm: 'ES256',
        created_at: expect.any(String),
        revoked_at: null,
      },
    ]);
    const all = json(await cli(['api-key', 'list'])).items as Array<{ id: string }>;
    expect(all.map((k) => k.id)).toEqual(expect.arrayContaining([older.id, newer.id, instance.id]));

    expect((await cli(['api-key', 'list', '--merchant', 'Not A Slug'])).code).toBe(2);
  });

  it('revokes a key: a running API process drops it and its cached tokens within 1 s', async () => {
    await t.get(SharedCaches).whenSubscribed();
    const key = await createApiKey(t, merchant);
    const token = await key.token();
    expect((await http(t.url, '/__probe/merchant', { token })).status).toBe(200); // verified and cached

    const result = await cli(['api-key', 'revoke', key.id]);
    const revoked = json(result);
    expect(revoked).toEqual({
      type: 'api-key',
      id: key.id,
      merchant_account_id: merchant,
      algorithm: 'ES512',
      created_at: expect.any(String),
      revoked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/),
    });
    // Well inside the 60 s the API would otherwise serve the token from its cache: the revocation's message did it.
    await waitFor(async () => (await http(t.url, '/__probe/merchant', { token })).status === 401, {
      timeoutMs: 10_000,
      intervalMs: 0,
      what: 'the revoked token to be refused',
    });

    const again = await cli(['api-key', 'revoke', key.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(key.id);
    expect(again.stdout).toBe('');
    expect((await cli(['api-key', 'revoke'])).code).toBe(2);
  });

  it('takes a key id that starts with "-" (a thumbprint can) as the id, for revoke and for token --key-id', async () => {
    // Before: parseArgs refused "-C…" as an unknown option, one key id in 64.
    for (const args of [
      ['api-key', 'revoke', '-Cnot-a-key'],
      ['api-key', 'revoke', '--', '-Cnot-a-key'],
    ]) {
      const result = await cli(args);
      expect(result.code).toBe(1);
      expect(result.stderr).not.toContain('Unknown option');
      expect(result.stderr).toMatch(/-Cnot-a-key|not found|no api key/i);
    }
    const keyFile = join(dataDir, 'dash.pem');
    json(await cli(['api-key', 'create', '--merchant', merchant, '--out', keyFile]));
    const signed = json(await cli(['token', '--key', keyFile, '--key-id', '-Cdash-id', '--scopes', 'buyers.read']));
    const header = JSON.parse(Buffer.from(String(signed.token).split('.')[0], 'base64url').toString());
    expect(header.kid).toBe('-Cdash-id');
  });

  it('without Redis it still revokes, and says that running processes follow only within the cache TTL', async () => {
    const key = await createApiKey(t, merchant);
    const result = await cli(['api-key', 'revoke', key.id], { REDIS_URL: '' });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).revoked_at).not.toBeNull();
    expect(result.stderr).toContain('within 60 s');
    const [row] = await t.db.query('SELECT revoked_at FROM api_keys WHERE id = $1', [key.id]);
    expect(row.revoked_at).not.toBeNull();
  });
});
