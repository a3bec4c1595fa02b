import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

export interface EntryPoint {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with the match of `ready` in its stdout; rejects if it exits first or takes longer than the timeout. */
  started: Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
  /** What it printed so far: each stream, and both in the order they came. */
  output(): { stdout: string; stderr: string; all: string };
}

/**
 * Starts a compiled entry point (`dist/main.js`, `dist/worker.js`) with node, exactly the environment
 * given (nothing inherited), and collects its output; `started` settles once `ready` shows on stdout.
 */
export function startEntryPoint(
  script: string,
  options: {
    env: NodeJS.ProcessEnv;
    ready: RegExp;
    cwd?: string;
    timeoutMs?: number;
    /** In a process group of its own, as a shell runs a command: a signal to `-pid` then reaches what a terminal's would. */
    detached?: boolean;
  },
): EntryPoint {
  const child = spawn(process.execPath, [script], { env: options.env, cwd: options.cwd, detached: options.detached });
  let stdout = '';
  let stderr = '';
  let all = '';
  child.stdout.on('data', (d) => ((stdout += d), (all += d)));
  child.stderr.on('data', (d) => ((stderr += d), (all += d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${script} not ready in time:\n${all}`)),
      options.timeoutMs ?? 45_000,
    );
    child.stdout.on('data', () => {
      const match = stdout.match(options.ready);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}:\n${all}`));
    });
  });
  // Once ready, a later exit is the caller's business (it awaits `exited`), not an unhandled rejection.
  started.catch(() => undefined);
  return { child, started, exited, output: () => ({ stdout, stderr, all }) };
}
