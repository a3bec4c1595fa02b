import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

const created: string[] = [];
let dataDir: string | undefined;

/**
 * A new directory for a test file (`prefix` as for mkdtemp, e.g. 'vf-spool-'), removed after the
 * file's last test. It lives in the run's own temporary directory (test/support/run-temp-dir.ts).
 */
export function testTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/**
 * DATA_DIR for the apps and processes a test file starts: never the checkout's data/, where a
 * developer keeps their own development vault key (the jest global teardown checks it). One
 * directory per test file.
 */
export function testDataDir(): string {
  return (dataDir ??= testTempDir('vf-test-data-'));
}

/**
 * A DATA_DIR for the embedded PostgreSQL. Run as root, the package runs the server as the `postgres` user,
 * who must pass through every directory on the way to its cluster: the run's and this one are made
 * traversable (not listable) for it.
 */
export function embeddedDataDir(prefix: string): string {
  const dir = testTempDir(prefix);
  if (userInfo().uid === 0) for (const each of [tmpdir(), dir]) chmodSync(each, 0o711);
  return dir;
}

function removeAll(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
  dataDir = undefined;
}

// Jest loads this module once per test file (a module registry per file), so this root-level hook
// runs after the file's own afterAll hooks, once what they stop no longer uses the directories. A
// process 'exit' listener did not work under Jest: it gives test files a copy of `process` whose
// listeners the real process never calls, so every run left its vf-test-data-* directory behind.
// Outside Jest (the benches use the test PKI) there is no afterAll, and 'exit' is the real one.
const jestAfterAll = (globalThis as { afterAll?: (hook: () => void) => void }).afterAll;
if (jestAfterAll) jestAfterAll(removeAll);
else process.once('exit', removeAll);
