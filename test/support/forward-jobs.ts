import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEntryPoint } from './entry-point';
import { http } from './http';
import { entryPointEnv } from './test-app';

export interface WorkerProcess {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  exited: Promise<number | null>;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
}

/** `node dist/worker.js` against the run's database and Redis, resolved once it says it waits for jobs. */
export async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const worker = startEntryPoint('dist/worker.js', {
    env: entryPointEnv(env),
    ready: /waiting for jobs/,
    timeoutMs: 60_000,
  });
  await worker.started;
  const { child, exited } = worker;
  return {
    child,
    output: () => worker.output().all,
    exited,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export interface ScriptedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  at: number;
}

/** What the downstream does with one request: an answer, or hold it until released (or the connection goes). */
export type Step =
  { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | { hold: true };

/**
 * A downstream whose answers per path are scripted: each request to a path takes the next step of
 * that path's script (the last one repeats); unscripted paths answer 200 with a JSON echo.
 */
export async function startScriptedDownstream() {
  const scripts = new Map<string, Step[]>();
  const received: ScriptedRequest[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url!.split('?')[0];
      received.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      });
      const script = scripts.get(path);
      const step: Step = script
        ? script.length > 1
          ? script.shift()!
          : script[0]
        : { status: 200, body: JSON.stringify({ echo: Buffer.concat(chunks).toString('utf8') }) };
      if ('hold' in step) {
        held.push(res);
        return;
      }
      const answer = () => {
        res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
        res.end(step.body ?? JSON.stringify({ status: step.status }));
      };
      if (step.delayMs) setTimeout(answer, step.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    received,
    held,
    script(path: string, steps: Step[]) {
      scripts.set(path, [...steps]);
    },
    requestsTo(path: string) {
      return received.filter((r) => r.url.split('?')[0] === path);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * `count` queued forwards (Prefer: respond-async) to `targetUrl`, 20 at a time; the ids answered 202. A 503
 * (the queue unreachable for a moment) is counted as refused, not accepted; any other answer throws.
 */
export async function queuedLoad(
  apiUrl: string,
  token: string,
  targetUrl: string,
  count: number,
): Promise<{ accepted: string[]; refused: number }> {
  const accepted: string[] = [];
  let refused = 0;
  for (let sent = 0; sent < count; sent += 20) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(20, count - sent) }, () =>
        http(apiUrl, '/vault-forward', {
          method: 'POST',
          token,
          headers: {
            prefer: 'respond-async',
            'x-vault-forward-url': targetUrl,
            'x-vault-forward-http-method': 'POST',
          },
          body: { n: sent },
        }),
      ),
    );
    for (const answer of answers) {
      if (answer.status === 202) accepted.push(answer.body.id as string);
      else if (answer.status === 503) refused++;
      else throw new Error(`unexpected ${answer.status}: ${JSON.stringify(answer.body)}`);
    }
  }
  return { accepted, refused };
}
