import { snapshotCheckout } from './checkout-guard';
import { createRunTempDir } from './run-temp-dir';

/** Runs once before every project of the run (jest.config.js), before anything can write. */
export default function checkoutGuardSetup(): void {
  (globalThis as { checkoutBefore?: unknown }).checkoutBefore = snapshotCheckout(process.cwd());
  createRunTempDir();
}
