import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Debian's softhsm2 package (the CI installs it, .ci/run). */
export const SOFTHSM2_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

export interface SoftHsmToken {
  /** Where the token's files live: moving it away makes the token unavailable to a running process. */
  tokenDir: string;
  conf: string;
  label: string;
  pin: string;
  pinFile: string;
  /** VAULT_* settings for an app or the CLI using this token, and SOFTHSM2_CONF for a child process. */
  env(keyLabels: string): Record<string, string>;
}

/**
 * A fresh SoftHSM2 token whose files (token store, PIN file) go in `dir`, and whose library config is
 * written to `conf`, initialised with softhsm2-util. Shared by the tests (test/support/softhsm.ts) and
 * the benches (bench/keys.ts); the caller removes `dir` (and `conf`, when outside it).
 */
export function initSoftHsmToken(dir: string, conf: string, label: string): SoftHsmToken {
  if (!existsSync(SOFTHSM2_MODULE))
    throw new Error(`${SOFTHSM2_MODULE} is missing: apt-get install softhsm2 (what .ci/run does)`);
  const tokenDir = join(dir, 'tokens');
  mkdirSync(tokenDir, { recursive: true });
  writeFileSync(conf, `directories.tokendir = ${tokenDir}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  const pin = '24681357';
  const pinFile = join(dir, 'pin');
  writeFileSync(pinFile, `${pin}\n`, { mode: 0o600 });
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--so-pin', '13572468', '--pin', pin], {
    env: { ...process.env, SOFTHSM2_CONF: conf },
    stdio: 'pipe',
  });
  return {
    tokenDir,
    conf,
    label,
    pin,
    pinFile,
    env: (keyLabels) => ({
      SOFTHSM2_CONF: conf,
      VAULT_KEY_PROVIDER: 'pkcs11',
      VAULT_PKCS11_MODULE: SOFTHSM2_MODULE,
      VAULT_PKCS11_TOKEN_LABEL: label,
      VAULT_PKCS11_PIN_FILE: pinFile,
      VAULT_PKCS11_KEY_LABELS: keyLabels,
    }),
  };
}
