import { ChildProcess, spawn } from 'node:child_process';

/** Options of a redis-server of a test's own: loopback only, no persistence (stopping it loses every key). */
export const NO_PERSISTENCE = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];

/**
 * Starts `redis-server args…` and resolves once its output matches `ready` (by default: it accepts
 * connections). If it exits or does not get ready within 10 s, it is killed and the start rejects with
 * its output. Used by the private Redis, Sentinel and Cluster of the tests; never the machine's shared Redis.
 */
export async function startRedisServer(args: string[], ready = /Ready to accept connections/): Promise<ChildProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server ${args[0]} did not start:\n${out}`)), 10_000);
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (ready.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${out}`));
      });
    });
  } catch (error) {
    await killRedisServer(child);
    throw error;
  }
  // Drained, so a chatty server never blocks on a full pipe.
  child.stdout.resume();
  child.stderr.resume();
  return child;
}

/** SIGKILL, and waits for the exit (at once if it has already exited). */
export async function killRedisServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
