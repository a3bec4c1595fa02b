import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One temporary directory per test run, made the run's TMPDIR: every temp folder a test, a helper or
 * a child process (openssl, the entry points) makes goes under it, so the run can tell its own
 * leftovers from those of the other runs sharing the machine's temporary directory, and removes
 * them all at the end.
 */
export function createRunTempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), `vf-run-${process.pid}-`));
  process.env.VF_TEST_RUN_TMPDIR = dir;
  process.env.VF_TEST_OUTER_TMPDIR = process.env.TMPDIR ?? '';
  // os.tmpdir() reads TMPDIR on every call; the test workers and their children inherit it.
  process.env.TMPDIR = dir;
  return dir;
}

/**
 * Removes the run's directory and returns the `vf-*` entries the tests left in it (a test that does
 * not remove its temp folder). Other tools' leftovers (a browser profile) are removed silently.
 */
export function removeRunTempDir(): string[] {
  const dir = process.env.VF_TEST_RUN_TMPDIR;
  if (!dir) return [];
  const left = readdirSync(dir).filter((name) => name.startsWith('vf-'));
  rmSync(dir, { recursive: true, force: true });
  if (process.env.VF_TEST_OUTER_TMPDIR) process.env.TMPDIR = process.env.VF_TEST_OUTER_TMPDIR;
  else delete process.env.TMPDIR;
  delete process.env.VF_TEST_RUN_TMPDIR;
  return left;
}
