import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testTempDir } from './temp-data-dir';

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
 * A fresh SoftHSM2 token in a temporary folder of its own (removed after the test file), initialised
 * with softhsm2-util. Its config goes where SOFTHSM2_CONF points: the path the e2e global setup gave
 * every worker (a test cannot set the C environment the library reads). The library reads it once per
 * process, so one test file uses one token; call removeSoftHsmConfig after its last test.
 */
export function createSoftHsmToken(label = 'vf-test'): SoftHsmToken {
  if (!existsSync(SOFTHSM2_MODULE))
    throw new Error(`${SOFTHSM2_MODULE} is missing: apt-get install softhsm2 (what .ci/run does)`);
  const conf = process.env.SOFTHSM2_CONF;
  if (!conf) throw new Error('SOFTHSM2_CONF is unset: run e2e tests through jest (global setup)');
  const dir = testTempDir('vf-softhsm-');
  const tokenDir = join(dir, 'tokens');
  execFileSync('mkdir', ['-p', tokenDir]);
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

export function removeSoftHsmConfig(): void {
  if (process.env.SOFTHSM2_CONF) rmSync(process.env.SOFTHSM2_CONF, { force: true });
}
