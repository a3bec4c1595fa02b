import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * Two concerns with one owner each (docs/architecture.md, "One owner per concern"): sealing is done by
 * src/modules/vault only, and "now" is read from the Clock (src/platform/time/clock.ts). A new place that
 * does either by hand fails here until it goes through its owner or is listed below with why it may not.
 */
const SRC = resolve(__dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith('.ts') ? [path] : [];
  });
}

const files = sources(SRC).map((path) => ({ file: relative(SRC, path), text: readFileSync(path, 'utf8') }));

/** The lines of `text` that match `pattern`, comment lines left out (they may name what they forbid). */
function lines(file: string, text: string, pattern: RegExp): string[] {
  return text
    .split('\n')
    .map((line, i) => ({ line: line.trim(), at: `${file}:${i + 1}` }))
    .filter(({ line }) => !/^(\/\/|\/?\*)/.test(line) && pattern.test(line))
    .map(({ at, line }) => `${at}: ${line}`);
}

describe('one sealing entry point: the vault', () => {
  const outside = files.filter(({ file }) => !file.startsWith('modules/vault/'));

  it('no file outside modules/vault/ encrypts or decrypts with node:crypto ciphers', () => {
    const CIPHER = /\bcreate(De)?[Cc]ipher(iv)?\b|['"]aes-\d+-(gcm|cbc|ctr)['"]/;
    expect(outside.flatMap(({ file, text }) => lines(file, text, CIPHER))).toEqual([]);
  });

  it('no file outside modules/vault/ imports the envelope or AES-GCM primitives', () => {
    const PRIMITIVES = new Set([
      'seal',
      'open',
      'sealParts',
      'sealPart',
      'openPart',
      'rewrap',
      'wrapSecret',
      'unwrapSecret',
    ]);
    const offenders = outside.flatMap(({ file, text }) =>
      [...text.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'[^']*vault\/(?:crypto\/)?(envelope|aes-gcm)'/g)]
        .filter(([, names, module]) =>
          module === 'aes-gcm' ? true : names.split(',').some((name) => PRIMITIVES.has(name.trim())),
        )
        .map(([statement]) => `${file}: ${statement.replace(/\s+/g, ' ')}`),
    );
    expect(offenders).toEqual([]);
  });

  it('no file outside modules/vault/ turns a sealed record into text or back (SecretSealer.sealText, sealJsonText)', () => {
    // A sealed part to or from base64 by hand, or the one-string form's fields built by hand.
    const SEALED_TEXT = new RegExp(
      [
        String.raw`(ciphertext|wrappedKey|wrapped_key|masterKeyId|sealed)[^;]*(toString|Buffer\.from)\([^)]*'base64'`,
        String.raw`Buffer\.from\([^)]*'base64'\)[^;]*(ciphertext|wrappedKey|masterKeyId)`,
        String.raw`\bk:\s*\w+\.masterKeyId`,
      ].join('|'),
    );
    expect(outside.flatMap(({ file, text }) => lines(file, text, SEALED_TEXT))).toEqual([]);
  });
});

/**
 * Where src/ may read the time without the Clock, by file, with how many readings and why. Durations for
 * logs and metrics are measured on the monotonic clock: they are not "now".
 */
const CLOCK_EXCEPTIONS: Record<string, { count: number; why: string }> = {
  'platform/time/clock.ts': { count: 1, why: 'the Clock implementation itself' },
  'modules/vault/pkcs11-keyring.ts': {
    count: 11,
    why: 'durations of token calls for metrics, and the least interval between two reinitializations (monotonic)',
  },
  'modules/forwarding/sending/downstream-client.ts': { count: 2, why: 'the downstream answer time, for metrics' },
  'modules/forwarding/request/forwarding.service.ts': { count: 1, why: "a forward's duration, for its record" },
  'modules/forwarding/request/forward-executor.ts': { count: 2, why: "a forward's duration, for its record" },
  'platform/logging/logging.module.ts': { count: 2, why: 'the response time, for the access log' },
  'platform/metrics/http-metrics.ts': {
    count: 2,
    why: 'the duration of a request answered ahead of fastify, for metrics (fastify times its own)',
  },
  'platform/job-queue/redis-forward-queue.ts': {
    count: 1,
    why: 'the swept marker’s value: a time for a person reading Redis, never read back',
  },
  'platform/job-queue/job-consumer.ts': {
    count: 1,
    why: 'BullMQ’s delayed set is keyed by this process’s Date.now(), as BullMQ itself reads it',
  },
};

/** Where src/ takes the production Clock itself instead of the injected one, and why no injection reaches there. */
const SYSTEM_CLOCK_USERS: Record<string, string> = {
  'platform/time/clock.ts': 'defines it',
  'app/core.module.ts': 'provides it as CLOCK unless a test pins another',
  'app/bootstrap/processes.ts': 'the process supervisor runs before any Nest module',
  'app/health/worker-healthcheck.ts': 'a script of its own, without Nest',
  'modules/merchants/auth/token-signer.ts': 'signs tokens for the CLI and for tests, outside the app',
  'modules/forwarding/records/forward-record-spool.ts': 'the default of a spool opened outside the app (tests, tools)',
  'modules/forwarding/sending/authentication-steps.ts': 'the default when built without Nest (unit tests)',
};

describe('one clock: "now" comes from the Clock', () => {
  it('the production clock is taken directly only where no injected Clock reaches', () => {
    const users = files.filter(({ text }) => /\bSYSTEM_CLOCK\b/.test(text)).map(({ file }) => file);
    expect(users.sort()).toEqual(Object.keys(SYSTEM_CLOCK_USERS).sort());
  });

  it('src/ reads the time (Date.now, new Date with no argument, performance.now) only where listed', () => {
    const READING = /\bDate\.now\b|\bnew Date\(\s*\)|\bperformance\.(now|timeOrigin)\b/g;
    const found: Record<string, number> = {};
    for (const { file, text } of files) {
      const count = text
        .split('\n')
        .filter((line) => !/^\s*(\/\/|\/?\*)/.test(line))
        .reduce((sum, line) => sum + (line.match(READING)?.length ?? 0), 0);
      if (count > 0) found[file] = count;
    }
    const listed = Object.fromEntries(Object.entries(CLOCK_EXCEPTIONS).map(([file, { count }]) => [file, count]));
    expect(found).toEqual(listed);
  });
});
