import { checkoutChanges, CheckoutSnapshot, snapshotCheckout } from './checkout-guard';

/** Fails the run when a test wrote into the checkout (data/ or a top-level *.pem) instead of a temporary directory. */
export default function checkoutGuardTeardown(): void {
  const before = (globalThis as { checkoutBefore?: CheckoutSnapshot }).checkoutBefore;
  if (!before) throw new Error('checkout guard: the global setup did not run');
  const changed = checkoutChanges(before, snapshotCheckout(process.cwd()));
  if (changed.length > 0) {
    throw new Error(
      `The tests wrote into the checkout (use a temporary directory, e.g. DATA_DIR): ${changed.slice(0, 20).join(', ')}`,
    );
  }
}
