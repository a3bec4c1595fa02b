import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/platform/config/config';
import { testTempDir } from '../support/temp-data-dir';

describe('Every secret may come from a file (<NAME>_FILE), as mounted Docker and Kubernetes secrets are', () => {
  const dir = testTempDir('vf-secret-files-');
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  };
  const KEY = Buffer.alloc(32, 7).toString('base64');

  it.each([
    ['DATABASE_URL', 'postgresql://app:s3cret@db:5432/vault', (c: ReturnType<typeof loadConfig>) => c.databaseUrl],
    ['REDIS_URL', 'redis://:s3cret@cache:6379', (c: ReturnType<typeof loadConfig>) => c.redisUrl],
    ['VAULT_MASTER_KEYS', `k1:${KEY}`, (c: ReturnType<typeof loadConfig>) => c.vaultMasterKeys.map((k) => k.id).join()],
    [
      'NETWORK_TOKEN_REQUESTOR_AUTHORIZATION',
      'Bearer s3cret',
      (c: ReturnType<typeof loadConfig>) => c.networkTokenRequestor?.authorization,
    ],
  ])('%s_FILE: the file holds the value (a final line break dropped)', (name, value, read) => {
    const env: Record<string, string> = { [`${name}_FILE`]: file(`${name}.txt`, `${value}\n`) };
    if (name === 'NETWORK_TOKEN_REQUESTOR_AUTHORIZATION') env.NETWORK_TOKEN_REQUESTOR_URL = 'https://tokens.example';
    const expected = name === 'VAULT_MASTER_KEYS' ? 'k1' : value;
    expect(read(loadConfig(env))).toBe(expected);
  });

  it('CURSOR_SECRET_FILE is read like CURSOR_SECRET', () => {
    const secret = 'a'.repeat(64);
    const fromFile = loadConfig({ CURSOR_SECRET_FILE: file('cursor.txt', `${secret}\n`) }).cursorSecret;
    expect(fromFile).toEqual(loadConfig({ CURSOR_SECRET: secret }).cursorSecret);
  });

  it('both the variable and its file set is refused, naming the variable, without the value', () => {
    const run = () =>
      loadConfig({
        DATABASE_URL: 'postgresql://a:pw1@x/y',
        DATABASE_URL_FILE: file('db.txt', 'postgresql://a:pw2@x/y'),
      });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow('DATABASE_URL: is set as well as DATABASE_URL_FILE; set only one');
  });

  it('a missing or empty file is refused naming the _FILE variable; the content is never in the message', () => {
    expect(() => loadConfig({ REDIS_URL_FILE: join(dir, 'absent') })).toThrow(/^REDIS_URL_FILE: no file at /);
    expect(() => loadConfig({ CURSOR_SECRET_FILE: file('empty.txt', '\n') })).toThrow(
      /^CURSOR_SECRET_FILE: .* is empty$/,
    );
    // A value that does not parse is reported under the variable it fills, and not repeated.
    let message = '';
    try {
      loadConfig({ DATABASE_URL_FILE: file('bad.txt', 'mysql://u:hunter2@x/y') });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^DATABASE_URL: /);
    expect(message).not.toContain('hunter2');
  });
});
