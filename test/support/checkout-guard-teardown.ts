import { checkoutChanges, CheckoutSnapshot, snapshotCheckout } from './checkout-guard';
import { removeRunTempDir } from './run-temp-dir';

/**
 * Fails the run when a test wrote into the checkout (data/ or a top-level *.pem) instead of a
 * temporary directory, or left a temp folder of its own (a `vf-*` entry in the run's TMPDIR).
 */
export default function checkoutGuardTeardown(): void {
  const left = removeRunTempDir();
  const before = (globalThis as { checkoutBefore?: CheckoutSnapshot }).checkoutBefore;
  if (!before) throw new Error('checkout guard: the global setup did not run');
  const changed = checkoutChanges(before, snapshotCheckout(process.cwd()));
  if (changed.length > 0) {
    throw new Error(
      `The tests wrote into the checkout (use a temporary directory, e.g. DATA_DIR): ${changed.slice(0, 20).join(', ')}`,
    );
  }
  if (left.length > 0) {
    throw new Error(
      'The tests left temporary folders behind (remove them in afterAll, or use testTempDir() of ' +
        `test/support/temp-data-dir.ts): ${left.slice(0, 20).join(', ')}`,
    );
  }
}
