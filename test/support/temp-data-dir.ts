import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let dir: string | undefined;

/**
 * DATA_DIR for the apps and processes a test file starts: never the checkout's data/, where a
 * developer keeps their own development vault key (the jest global teardown checks it). One
 * directory per test worker, removed when it exits.
 */
export function testDataDir(): string {
  if (dir === undefined) {
    const created = mkdtempSync(join(tmpdir(), 'vf-test-data-'));
    dir = created;
    process.once('exit', () => rmSync(created, { recursive: true, force: true }));
  }
  return dir;
}
