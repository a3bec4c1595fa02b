import { ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { testRedisUrl } from './test-services';

/**
 * Watches every command a Redis server runs, through `redis-cli monitor` as a child process of its own. The
 * watcher shares no connection, client or event loop state with the commands it watches, so it cannot
 * break them or the test: MONITOR on an ioredis connection answered lines that were already on the wire
 * after disconnect() as replies to no command, and ioredis raised "Command queue state error" for them
 * mid-test (redis/ioredis#1981). Nothing here is a client of the service's.
 */
export class RedisMonitor {
  /** Each command seen since start(), as its arguments (the command name first, as the client wrote it). */
  readonly commands: string[][] = [];
  /** Who ran each command of `commands`, as MONITOR names it: a client's `host:port`, or `lua` for a script's own. */
  readonly clients: string[] = [];

  private constructor(private readonly child: ChildProcess) {}

  /** Resolves once the server confirmed MONITOR (`OK`): every command from then on is seen. */
  static start(url = testRedisUrl()): Promise<RedisMonitor> {
    const child = spawn('redis-cli', ['-u', url, 'monitor'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const monitor = new RedisMonitor(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    return new Promise((resolve, reject) => {
      const lines = createInterface({ input: child.stdout });
      child.once('error', reject);
      child.once('exit', (code) =>
        reject(new Error(`redis-cli monitor exited (${code}) before it started: ${stderr}`)),
      );
      lines.on('line', (line) => {
        if (line === 'OK') return resolve(monitor);
        const args = monitorArgs(line);
        if (!args) return;
        monitor.commands.push(args);
        monitor.clients.push(/^\d+\.\d+ \[\d+ ([^\]]*)\]/.exec(line)?.[1] ?? '');
      });
    });
  }

  /** Ends the child and waits for it to exit. */
  stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
    });
  }
}

/** One quoted argument of a MONITOR line, as Redis writes it (sdscatrepr): `"…"` with backslash escapes. */
const QUOTED = /"((?:[^"\\]|\\.)*)"/g;
const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b', '"': '"', '\\': '\\' };

/** `1795943207.593930 [0 127.0.0.1:55804] "set" "k" "v"` → ['set', 'k', 'v']; null for any other line. */
function monitorArgs(line: string): string[] | null {
  const start = line.indexOf('] "');
  if (!/^\d+\.\d+ \[/.test(line) || start < 0) return null;
  return [...line.slice(start + 2).matchAll(QUOTED)].map(([, body]) =>
    body.replace(/\\(x[0-9a-f]{2}|.)/g, (_, e: string) =>
      e.length === 3 ? String.fromCharCode(parseInt(e.slice(1), 16)) : (ESCAPES[e] ?? e),
    ),
  );
}
