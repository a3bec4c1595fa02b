import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { http } from '../support/http';
import { ProbeModule } from '../support/probe.module';
import { startTestApp, TestApp } from '../support/test-app';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the compiled CLI exactly as `npm run --silent cli -- …` does, against the run's database. */
function cli(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['dist/cli/main.js', ...args],
      { env: { PATH: process.env.PATH, DATABASE_URL: process.env.TEST_DATABASE_URL }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** Each command prints exactly one JSON object on stdout. */
function json(result: CliResult): Record<string, any> {
  // stderr rides along so that a failure shows why the command failed.
  expect({ code: result.code, stderr: result.code === 0 ? '' : result.stderr }).toEqual({ code: 0, stderr: '' });
  const lines = result.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]);
}

describe('CLI: merchant, api-key and token commands mint credentials the API accepts', () => {
  let t: TestApp;
  const dir = mkdtempSync(join(tmpdir(), 'vf-cli-'));
  const merchantId = `cli-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    t = await startTestApp({ imports: [ProbeModule] });
  });
  afterAll(() => t.close());

  it('walks the quick start: merchant → instance key → token → authenticated call', async () => {
    expect(json(await cli('merchant', 'create', '--name', 'CLI Merchant', '--id', merchantId))).toMatchObject({ id: merchantId });

    const keyFile = join(dir, 'instance.pem');
    const key = json(await cli('api-key', 'create', '--instance', '--out', keyFile));
    expect(key).toEqual({ id: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), merchant_account_id: null, algorithm: 'ES512', private_key_file: keyFile });
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const pem = readFileSync(keyFile, 'utf8');
    expect(pem).toContain('-----BEGIN PRIVATE KEY-----');

    const { token } = json(await cli('token', '--key', keyFile, '--key-id', key.id, '--scopes', 'merchant-accounts.read'));
    const result = await http(t.url, `/merchant-accounts/${merchantId}`, { token });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ id: merchantId, display_name: 'CLI Merchant' });

    // The service keeps the public key only: no private scalar, no PEM body.
    const [row] = await t.db.query('SELECT * FROM api_keys WHERE id = $1', [key.id]);
    expect(row.public_key.d).toBeUndefined();
    const pemBody = pem.split('\n').filter((l) => l && !l.startsWith('-----')).join('');
    expect(JSON.stringify(row)).not.toContain(pemBody.slice(20, 60));
  });

  it('mints merchant-bound ES256 keys whose tokens act for that merchant', async () => {
    const keyFile = join(dir, 'merchant.pem');
    const key = json(await cli('api-key', 'create', '--merchant', merchantId, '--algorithm', 'ES256', '--out', keyFile));
    expect(key).toMatchObject({ merchant_account_id: merchantId, algorithm: 'ES256' });
    const { token } = json(await cli('token', '--key', keyFile, '--key-id', key.id, '--ttl', '60'));
    const [, payload] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    expect(claims.exp - claims.iat).toBe(60);
    expect(claims.scopes).toEqual(['*.read', '*.write']);
    const result = await http(t.url, '/__probe/merchant', { token });
    expect(result.body).toEqual({ merchant_account_id: merchantId, key_id: key.id });
  });

  it('derives a slug from the name when --id is absent', async () => {
    const name = `Café Zürich ${randomBytes(3).toString('hex')}`;
    const { id } = json(await cli('merchant', 'create', '--name', name));
    expect(id).toMatch(/^cafe-zurich-[0-9a-f]{6}$/);
  });

  it('fails clearly: duplicate merchant, unknown merchant, missing flags, ttl over an hour, existing key file', async () => {
    const duplicate = await cli('merchant', 'create', '--name', 'Again', '--id', merchantId);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('already exists');
    expect(duplicate.stdout).toBe('');

    const unknown = await cli('api-key', 'create', '--merchant', 'no-such-merchant', '--out', join(dir, 'x.pem'));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no-such-merchant');

    const usage = await cli('api-key', 'create', '--instance');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--out');

    const long = await cli('token', '--key', join(dir, 'instance.pem'), '--key-id', 'x', '--ttl', '7200');
    expect(long.code).toBe(1);
    expect(long.stderr).toContain('3600');

    const overwrite = await cli('api-key', 'create', '--instance', '--out', join(dir, 'instance.pem'));
    expect(overwrite.code).toBe(2);
    expect(overwrite.stderr).toContain('refusing to overwrite');
  });

  it('vault rotate-keys re-wraps under the first configured key and reports every row it could not', async () => {
    const { TEST_MASTER_KEY_1, TEST_MASTER_KEY_2 } = await import('../support/test-app');
    const result = await new Promise<CliResult>((resolve) =>
      execFile(
        process.execPath,
        ['dist/cli/main.js', 'vault', 'rotate-keys', '--batch-size', '50'],
        {
          env: {
            PATH: process.env.PATH,
            DATABASE_URL: process.env.TEST_DATABASE_URL,
            // k1 stays current, so the other test files (which know only k1) are unaffected.
            VAULT_MASTER_KEYS: `${TEST_MASTER_KEY_1},${TEST_MASTER_KEY_2}`,
          },
          timeout: 60_000,
        },
        (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      ),
    );
    const output = JSON.parse(result.stdout.trim());
    expect(output).toEqual({
      master_key_id: 'test-k1',
      rewrapped_payment_methods: expect.any(Number),
      rewrapped_merchant_keys: expect.any(Number),
      failed_payment_methods: expect.any(Array),
      failed_merchant_keys: expect.any(Array),
      remaining: expect.any(Number),
    });
    // Other test files may have left deliberately tampered rows in this run's database.
    expect(output.remaining).toBeGreaterThanOrEqual(output.failed_payment_methods.length + output.failed_merchant_keys.length);
    expect(result.code).toBe(output.remaining > 0 ? 1 : 0);
    const usage = await cli('vault', 'rotate-keys', '--batch-size', '0');
    expect(usage.code).toBe(2);
  });

  it('migrate is idempotent and reports what it applied', async () => {
    expect(json(await cli('migrate'))).toEqual({ applied: [] });
  });
});
