import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Tests use temporary directories only. What a run could leave in the checkout by falling back on
 * the defaults: `data/` (DATA_DIR: development vault and cursor keys, the embedded database) and
 * private key files at the top. The jest global setup takes a snapshot, the teardown compares.
 */
export type CheckoutSnapshot = Map<string, number>;

export function snapshotCheckout(root: string): CheckoutSnapshot {
  const files: CheckoutSnapshot = new Map();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        files.set(`${relative(root, path)}/`, 0);
        walk(path);
      } else files.set(relative(root, path), statSync(path).mtimeMs);
    }
  };
  if (statSync(join(root, 'data'), { throwIfNoEntry: false })?.isDirectory()) {
    files.set('data/', 0);
    walk(join(root, 'data'));
  }
  for (const name of readdirSync(root)) if (name.endsWith('.pem')) files.set(name, statSync(join(root, name)).mtimeMs);
  return files;
}

/** Paths created or modified since `before`, e.g. ["data/", "data/vault-master-key"]. */
export function checkoutChanges(before: CheckoutSnapshot, after: CheckoutSnapshot): string[] {
  return [...after].filter(([path, mtime]) => before.get(path) !== mtime).map(([path]) => path);
}
