import type { ChildProcess } from 'node:child_process';

/**
 * Resolves once a server the test spawned (stdout and stderr piped) prints a match of `ready`; rejects
 * with what it printed if it exits, cannot be spawned, or is not ready within `timeoutMs`.
 */
export function untilReady(child: ChildProcess, ready: RegExp, what: string, timeoutMs: number): Promise<void> {
  let out = '';
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start:\n${out}`)), timeoutMs);
    const read = (d: Buffer) => {
      out = (out + d.toString()).slice(-20_000);
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}:\n${out}`));
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
