import { rmSync } from 'node:fs';
import { testTempDir } from './temp-data-dir';
import { initSoftHsmToken, SoftHsmToken } from './softhsm-token';

export { SOFTHSM2_MODULE } from './softhsm-token';
export type { SoftHsmToken } from './softhsm-token';

/**
 * A fresh SoftHSM2 token in a temporary folder of its own (removed after the test file), initialised
 * with softhsm2-util. Its config goes where SOFTHSM2_CONF points: the path the e2e global setup gave
 * every worker (a test cannot set the C environment the library reads). The library reads it once per
 * process, so one test file uses one token; call removeSoftHsmConfig after its last test.
 */
export function createSoftHsmToken(label = 'vf-test'): SoftHsmToken {
  const conf = process.env.SOFTHSM2_CONF;
  if (!conf) throw new Error('SOFTHSM2_CONF is unset: run e2e tests through jest (global setup)');
  return initSoftHsmToken(testTempDir('vf-softhsm-'), conf, label);
}

export function removeSoftHsmConfig(): void {
  if (process.env.SOFTHSM2_CONF) rmSync(process.env.SOFTHSM2_CONF, { force: true });
}
