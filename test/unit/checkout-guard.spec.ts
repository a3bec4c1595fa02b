import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkoutChanges, snapshotCheckout } from '../support/checkout-guard';

describe('checkout guard (jest global setup/teardown): a run that writes into the checkout fails', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'vf-guard-'));
    writeFileSync(join(root, 'package.json'), '{}');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('sees a data/ directory that the run created, with what is in it', () => {
    const before = snapshotCheckout(root);
    mkdirSync(join(root, 'data'));
    writeFileSync(join(root, 'data', 'vault-master-key'), 'x');
    expect(checkoutChanges(before, snapshotCheckout(root))).toEqual(['data/', 'data/vault-master-key']);
  });

  it('in a checkout that already has data/, sees new and rewritten files only', () => {
    mkdirSync(join(root, 'data'));
    writeFileSync(join(root, 'data', 'cursor-secret'), 'old');
    writeFileSync(join(root, 'data', 'untouched'), 'old');
    utimesSync(join(root, 'data', 'cursor-secret'), new Date(1_000_000), new Date(1_000_000));
    const before = snapshotCheckout(root);
    expect(checkoutChanges(before, snapshotCheckout(root))).toEqual([]);
    writeFileSync(join(root, 'data', 'cursor-secret'), 'new');
    writeFileSync(join(root, 'instance.pem'), 'key');
    expect(checkoutChanges(before, snapshotCheckout(root))).toEqual(['data/cursor-secret', 'instance.pem']);
  });
});
