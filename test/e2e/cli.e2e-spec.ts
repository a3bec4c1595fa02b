import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { http } from '../support/http';
import { ProbeModule } from '../support/probe.module';
import { PaymentMethodResolver } from '../../src/modules/vault/payment-method-resolver.service';
import { cardNumber, createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { createIsolatedDatabase } from '../support/isolated-database';
import { startTestApp, TEST_MASTER_KEY_1, TEST_MASTER_KEY_2, TestApp } from '../support/test-app';
import { TEST_LEDGER_KEY } from '../support/ledger-key';
import { rotationResult } from '../support/rotation';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

// Never the checkout's data/: without VAULT_MASTER_KEYS and CURSOR_SECRET the CLI keeps development keys there.
const dataDir = mkdtempSync(join(tmpdir(), 'vf-cli-data-'));

/** Runs the compiled CLI exactly as `npm run --silent cli -- …` does, against the run's database. */
function cli(...args: string[]): Promise<CliResult> {
  return cliWith({ DATABASE_URL: process.env.TEST_DATABASE_URL! }, ...args);
}

function cliWith(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return cliInput(env, undefined, ...args);
}

/** The same, with `input` on the CLI's stdin. */
function cliInput(env: Record<string, string>, input: string | undefined, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['dist/cli/main.js', ...args],
      { env: { PATH: process.env.PATH, DATA_DIR: dataDir, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(input ?? '');
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
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('walks the quick start: merchant → instance key → token → authenticated call', async () => {
    expect(json(await cli('merchant', 'create', '--name', 'CLI Merchant', '--id', merchantId))).toMatchObject({
      id: merchantId,
    });

    const keyFile = join(dir, 'instance.pem');
    const key = json(await cli('api-key', 'create', '--instance', '--out', keyFile));
    expect(key).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      merchant_account_id: null,
      algorithm: 'ES512',
      private_key_file: keyFile,
    });
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const pem = readFileSync(keyFile, 'utf8');
    expect(pem).toContain('-----BEGIN PRIVATE KEY-----');

    const { token } = json(
      await cli('token', '--key', keyFile, '--key-id', key.id, '--scopes', 'merchant-accounts.read'),
    );
    const result = await http(t.url, `/merchant-accounts/${merchantId}`, { token });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ id: merchantId, display_name: 'CLI Merchant' });

    // The service keeps the public key only: no private scalar, no PEM body.
    const [row] = await t.db.query('SELECT * FROM api_keys WHERE id = $1', [key.id]);
    expect(row.public_key.d).toBeUndefined();
    const pemBody = pem
      .split('\n')
      .filter((l) => l && !l.startsWith('-----'))
      .join('');
    expect(JSON.stringify(row)).not.toContain(pemBody.slice(20, 60));
  });

  it('mints merchant-bound ES256 keys whose tokens act for that merchant', async () => {
    const keyFile = join(dir, 'merchant.pem');
    const key = json(
      await cli('api-key', 'create', '--merchant', merchantId, '--algorithm', 'ES256', '--out', keyFile),
    );
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

  it('sets Secure Fields origins: merchant create and update --secure-fields-origin, repeatable, checked as the API does', async () => {
    const id = `cli-sf-${randomBytes(4).toString('hex')}`;
    const created = json(
      await cli(
        'merchant',
        'create',
        '--name',
        'Fields',
        '--id',
        id,
        '--secure-fields-origin',
        'https://Shop.Example:443/',
        '--secure-fields-origin',
        'http://shop.localhost:8123',
      ),
    );
    expect(created).toEqual({
      id,
      display_name: 'Fields',
      secure_fields_origins: ['https://shop.example', 'http://shop.localhost:8123'],
    });
    const updated = json(await cli('merchant', 'update', '--id', id, '--secure-fields-origin', 'https://pay.example'));
    expect(updated.secure_fields_origins).toEqual(['https://pay.example']);
    expect(
      json(await cli('merchant', 'update', '--id', id, '--no-secure-fields-origins')).secure_fields_origins,
    ).toEqual([]);

    const refused = await cli('merchant', 'update', '--id', id, '--secure-fields-origin', 'http://shop.example');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--secure-fields-origin "http://shop.example" must use https://');
    expect((await cli('merchant', 'update', '--id', id)).code).toBe(2);
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
    expect(overwrite.code).toBe(1);
    // One line saying what to do, not the whole usage text.
    expect(overwrite.stderr.trim().split('\n')).toEqual([expect.stringMatching(/refusing to overwrite.*--exist-ok/)]);
  });

  it('--exist-ok: run twice, merchant create and api-key create answer what the first run made', async () => {
    const id = `again-${randomBytes(3).toString('hex')}`;
    const first = json(await cli('merchant', 'create', '--name', 'Again', '--id', id, '--exist-ok'));
    expect(json(await cli('merchant', 'create', '--name', 'Again', '--id', id, '--exist-ok'))).toEqual(first);
    const keyFile = join(dir, `${id}.pem`);
    const made = json(await cli('api-key', 'create', '--merchant', id, '--out', keyFile, '--exist-ok'));
    const pem = readFileSync(keyFile, 'utf8');
    expect(json(await cli('api-key', 'create', '--merchant', id, '--out', keyFile, '--exist-ok'))).toEqual(made);
    expect(readFileSync(keyFile, 'utf8')).toBe(pem);
    // A file that is no active key of that merchant is still refused, and left as it is.
    const other = await cli('api-key', 'create', '--merchant', merchantId, '--out', keyFile, '--exist-ok');
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`is no active key of merchant ${merchantId}`);
    json(await cli('api-key', 'revoke', String(made.id)));
    const revoked = await cli('api-key', 'create', '--merchant', id, '--out', keyFile, '--exist-ok');
    expect(revoked.stderr).toContain('refusing to overwrite');
    expect(readFileSync(keyFile, 'utf8')).toBe(pem);
  });

  it('token works out the key id from the PEM (RFC 7638 thumbprint), so --key-id is optional', async () => {
    const keyFile = join(dir, 'derived.pem');
    const key = json(await cli('api-key', 'create', '--merchant', merchantId, '--out', keyFile));
    const { token } = json(await cli('token', '--key', keyFile, '--scopes', 'buyers.read'));
    const header = JSON.parse(Buffer.from(String(token).split('.')[0], 'base64url').toString());
    expect(header.kid).toBe(key.id);
    expect((await http(t.url, '/__probe/merchant', { token })).body).toEqual({
      merchant_account_id: merchantId,
      key_id: key.id,
    });

    const notAKey = join(dir, 'not-a-key.pem');
    writeFileSync(notAKey, 'hello\n');
    const bad = await cli('token', '--key', notAKey);
    expect(bad).toMatchObject({ code: 1, stdout: '' });
    expect(bad.stderr).toContain('not a PEM private key');
  });

  it('--out - puts the private key in the JSON output, and token --key - reads it from stdin: no file at all', async () => {
    const before = readdirSync(dir).length;
    const key = json(await cli('api-key', 'create', '--merchant', merchantId, '--out', '-'));
    expect(Object.keys(key).sort()).toEqual(['algorithm', 'id', 'merchant_account_id', 'private_key']);
    expect(key.private_key).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----END PRIVATE KEY-----$/);
    expect(readdirSync(dir)).toHaveLength(before);
    const { token } = json(
      await cliInput({ DATABASE_URL: process.env.TEST_DATABASE_URL! }, key.private_key, 'token', '--key', '-'),
    );
    expect((await http(t.url, '/__probe/merchant', { token })).body).toEqual({
      merchant_account_id: merchantId,
      key_id: key.id,
    });
  });

  it('usage text goes to stdout only when asked for (--help); otherwise to stderr, with exit 2 and nothing on stdout', async () => {
    const help = await cli('--help');
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('Usage:');
    for (const args of [[], ['nonsense'], ['api-key', 'create', '--instance'], ['token']]) {
      const result = await cli(...args);
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).toContain('Usage:');
    }
  });

  it('a key file that cannot be written leaves no key behind: exit 1, and the api_keys table is unchanged', async () => {
    const count = async () => Number((await t.db.query('SELECT count(*)::int AS n FROM api_keys'))[0].n);
    const before = await count();
    const result = await cli('api-key', 'create', '--instance', '--out', '/nonexistent/x.pem');
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain('/nonexistent/x.pem');
    expect(result.stderr).toContain('no key was created');
    expect(await count()).toBe(before);

    // A failure after the file was opened (a bad setting, an unknown merchant) removes the empty file it created.
    const badConfig = join(dir, 'bad-config.pem');
    const config = await cliWith(
      { DATABASE_URL: process.env.TEST_DATABASE_URL!, VAULT_MASTER_KEYS: 'k1:tooshort' },
      'api-key',
      'create',
      '--instance',
      '--out',
      badConfig,
    );
    expect(config).toMatchObject({ code: 1, stdout: '' });
    expect(config.stderr).toMatch(/^Configuration error: VAULT_MASTER_KEYS: /);
    expect(existsSync(badConfig)).toBe(false);
    const keyFile = join(dir, 'unknown-merchant.pem');
    expect((await cli('api-key', 'create', '--merchant', 'no-such-merchant', '--out', keyFile)).code).toBe(1);
    expect(existsSync(keyFile)).toBe(false);
    expect(await count()).toBe(before);
  });

  describe("docs/cli.md's script snippet", () => {
    /** The shell block under "To capture values in a script", against this run's app and merchant account. */
    function snippet(): string {
      const readme = readFileSync('docs/cli.md', 'utf8');
      const start = readme.indexOf('To capture values in a script');
      const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start));
      expect(start).toBeGreaterThan(0);
      return block![1]
        .replaceAll('http://127.0.0.1:3000', t.url)
        .replaceAll('/merchant-accounts/default', `/merchant-accounts/${merchantId}`);
    }
    function bash(script: string, env: Record<string, string>): Promise<CliResult> {
      return new Promise((resolve) => {
        execFile(
          'bash',
          ['--norc', '--noprofile', '-c', script],
          { env: { ...process.env, DATA_DIR: dataDir, ...env }, timeout: 60_000 },
          (error, stdout, stderr) =>
            resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
        );
      });
    }

    it('runs as written (npm run cli, no key file) and makes the authenticated call', async () => {
      const result = await bash(snippet(), { DATABASE_URL: process.env.TEST_DATABASE_URL! });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(result.stdout)).toMatchObject({ type: 'merchant-account', id: merchantId });
    });

    it('stops at the first failing CLI call, with a nonzero exit and no empty token passed on', async () => {
      const result = await bash(snippet(), {
        DATABASE_URL: process.env.TEST_DATABASE_URL!,
        VAULT_MASTER_KEYS: 'k1:tooshort',
      });
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('VAULT_MASTER_KEYS');
    });
  });

  it("runs docs/operations.md's Docker CLI block as the api container would (its environment, no tty, cwd not the checkout)", async () => {
    const readme = readFileSync('docs/operations.md', 'utf8');
    const section = readme.slice(readme.indexOf('The CLI runs in the `api` container'));
    const block = /```sh\n([\s\S]*?)```/.exec(section)![1];
    expect(block).toContain('docker compose exec -T api node dist/cli/main.js');
    const id = `docker-${randomBytes(4).toString('hex')}`;
    const local = block.replaceAll('docker compose exec -T api node dist/', `node ${join(process.cwd(), 'dist')}/`);
    const script = `set -eu\n${local.replaceAll(' default', ` ${id}`)}`;
    const cwd = mkdtempSync(join(tmpdir(), 'vf-compose-cli-'));
    // docker-compose.yml's environment: production mode, the shared database, keys given.
    const env = {
      PATH: process.env.PATH!,
      NODE_ENV: 'production',
      DATABASE_URL: process.env.TEST_DATABASE_URL!,
      VAULT_MASTER_KEYS: TEST_MASTER_KEY_1,
      CURSOR_SECRET: 'test-cursor-secret-not-for-production-0123456789',
      LEDGER_SIGNING_KEY: TEST_LEDGER_KEY,
      DATA_DIR: dataDir,
    };
    const result = await new Promise<CliResult>((resolve) =>
      execFile(
        'bash',
        ['--norc', '--noprofile', '-c', script],
        { cwd, env, timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      ),
    );
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = result.stdout.trim().split('\n');
    expect(JSON.parse(lines[0])).toEqual({ id, display_name: 'Default', secure_fields_origins: [] });
    const { token } = JSON.parse(lines[1]);
    expect(statSync(join(cwd, `${id}.pem`)).mode & 0o777).toBe(0o600);
    expect((await http(t.url, '/__probe/merchant', { token })).body).toMatchObject({ merchant_account_id: id });
    rmSync(cwd, { recursive: true, force: true });
  });

  it('vault rotate-keys re-wraps every row, batch after batch, and reports exactly what it did', async () => {
    // Rotation re-wraps every row of its database: a database of its own keeps the other test
    // files' cards under the key their apps hold.
    const own = await createIsolatedDatabase('rotate_cli');
    const before = await startTestApp({ env: { DATABASE_URL: own.url } });
    const after: TestApp[] = [];
    try {
      const merchants = [(await createMerchantAccount(before)).id, (await createMerchantAccount(before)).id];
      const numbers = new Map<string, string>();
      for (let i = 0; i < 23; i++) {
        const number = cardNumber('4', 16);
        numbers.set((await createCard(before, merchants[i % 2], { number })).id, number);
      }
      // One more card whose data key no longer authenticates (another row's moved onto it).
      const tampered = (await createCard(before, merchants[0])).id;
      await before.db.query(
        `UPDATE payment_methods t SET ciphertext = s.ciphertext, wrapped_key = s.wrapped_key FROM ` +
          `payment_methods s WHERE s.id = $1 AND t.id = $2`,
        [[...numbers.keys()][0], tampered],
      );
      const rows = async () =>
        new Map<string, { key: string; wrapped: string }>(
          (
            await before.db.query(
              `SELECT id, master_key_id, encode(wrapped_key, 'hex') AS wrapped FROM payment_methods`,
            )
          ).map((r: { id: string; master_key_id: string; wrapped: string }) => [
            r.id,
            { key: r.master_key_id, wrapped: r.wrapped },
          ]),
        );
      const merchantKeys = async () =>
        (await before.db.query(`SELECT master_key_id FROM vault_merchant_keys ORDER BY merchant_account_id`)).map(
          (r: { master_key_id: string }) => r.master_key_id,
        );
      const old = await rows();
      expect([...old.values()].every((row) => row.key === 'test-k1')).toBe(true);
      expect(await merchantKeys()).toEqual(['test-k1', 'test-k1']);

      // The new key first (current), the old one still listed; batches of 5 over 24 rows.
      const rotate = () =>
        cliWith(
          { DATABASE_URL: own.url, VAULT_MASTER_KEYS: `${TEST_MASTER_KEY_2},${TEST_MASTER_KEY_1}` },
          'vault',
          'rotate-keys',
          '--batch-size',
          '5',
        );
      const first = await rotate();
      expect(JSON.parse(first.stdout.trim())).toEqual(
        rotationResult({
          rewrapped_payment_methods: 23,
          rewrapped_merchant_keys: 2,
          failed_payment_methods: [tampered],
          remaining: 1,
        }),
      );
      expect(first.code).toBe(1); // the old key must stay: a row still needs it
      const rotated = await rows();
      for (const [id, row] of rotated) {
        if (id === tampered) expect(row).toEqual(old.get(id));
        else {
          expect(row.key).toBe('test-k2');
          expect(row.wrapped).not.toBe(old.get(id)!.wrapped);
        }
      }
      expect(await merchantKeys()).toEqual(['test-k2', 'test-k2']);

      // Every card opens with the new key alone, and fingerprints (the merchant keys) still agree.
      const onlyNew = await startTestApp({ env: { DATABASE_URL: own.url, VAULT_MASTER_KEYS: TEST_MASTER_KEY_2 } });
      after.push(onlyNew);
      const ids = [...numbers.keys()];
      const opened = await onlyNew.get(PaymentMethodResolver).resolve(
        merchants[0],
        ids.filter((_, i) => i % 2 === 0),
      );
      const opened2 = await onlyNew.get(PaymentMethodResolver).resolve(
        merchants[1],
        ids.filter((_, i) => i % 2 === 1),
      );
      ids
        .filter((_, i) => i % 2 === 0)
        .forEach((id, n) => expect(opened.get(`CARD_NUMBER_${n + 1}`)).toBe(numbers.get(id)));
      ids
        .filter((_, i) => i % 2 === 1)
        .forEach((id, n) => expect(opened2.get(`CARD_NUMBER_${n + 1}`)).toBe(numbers.get(id)));
      const [{ fingerprint }] = await before.db.query('SELECT fingerprint FROM payment_methods WHERE id = $1', [
        ids[1],
      ]);
      expect((await createCard(onlyNew, merchants[1], { number: numbers.get(ids[1])! })).fingerprint).toBe(fingerprint);

      // With the broken row gone, a second run has nothing left to do and says the old key may go.
      await before.db.query('DELETE FROM payment_methods WHERE id = $1', [tampered]);
      const second = await rotate();
      expect(JSON.parse(second.stdout.trim())).toEqual(rotationResult({}));
      expect(second.code).toBe(0);
    } finally {
      for (const app of after) await app.close();
      await before.close();
      await own.drop();
    }
    const usage = await cli('vault', 'rotate-keys', '--batch-size', '0');
    expect(usage.code).toBe(2);
  });

  it('migrate is idempotent and reports what it applied', async () => {
    expect(json(await cli('migrate'))).toEqual({ applied: [] });
  });
});
