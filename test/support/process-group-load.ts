import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { Agent, request } from 'undici';
import { listenOnLoopback } from './downstream';

/** One request a load loop sent, and what came of it. */
export interface Outcome {
  kind: 'sync' | 'queued';
  /** Unique per request: in its body, so the downstream can say how often it saw it. */
  id: string;
  sentAt: number;
  status?: number;
  requestId?: string;
  /** The 202's job id, or the synchronous answer's body. */
  body?: any;
  /** The error's code when no answer came (the connection was cut). */
  error?: string;
}

/** What the caller sees when the process holding its connection is killed: the socket goes, nothing else. */
export const CONNECTION_ERRORS = ['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED'];

/**
 * A downstream that answers each request with a JSON echo of its body's id after `delayMs` (so the kill
 * catches forwards mid-flight), counting the ids it saw; `peer` names the process that sent each.
 */
export async function startCountingDownstream(
  delayMs: number,
  peer: (remotePort: number) => number | undefined,
  /** Requests from a sender this returns true for get no answer: they stay in flight until the sender dies. */
  hold: (sender: number | undefined) => boolean = () => false,
) {
  const seen = new Map<string, number>();
  const senders = new Map<string, number | undefined>();
  const server = createServer((req, res) => {
    const sender = peer(req.socket.remotePort!);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id;
      seen.set(id, (seen.get(id) ?? 0) + 1);
      senders.set(id, sender);
      if (hold(sender)) return;
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id })), delayMs);
    });
  });
  return {
    ...(await listenOnLoopback(server)),
    seen,
    senders,
  };
}

/**
 * Which of `pids` holds the TCP connection from local port `localPort` to `remotePort` on 127.0.0.1,
 * read from /proc (Linux): the socket's inode in /proc/net/tcp, then the process whose fds hold it.
 * How the test tells which worker process sent a forward, without the service saying so.
 */
export function pidOfConnection(localPort: number, remotePort: number, pids: number[]): number | undefined {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  let inode: string | undefined;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      if (fields[1].endsWith(`:${hex(localPort)}`) && fields[2].endsWith(`:${hex(remotePort)}`)) inode = fields[9];
    }
  }
  if (inode === undefined) return undefined;
  for (const pid of pids) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
        } catch {
          // closed in between
        }
      }
    } catch {
      // the process is gone
    }
  }
  return undefined;
}

/**
 * `loops` concurrent senders, each sending one forward at a time on a new connection (so the supervisor
 * hands every request to a process in turn), alternating synchronous and queued ones, until stop().
 */
export function forwardLoad(options: { url: string; token: string; target: string; loops: number }) {
  const agent = new Agent({ pipelining: 0 });
  const outcomes: Outcome[] = [];
  let stopping = false;
  const send = async (kind: Outcome['kind']): Promise<void> => {
    const outcome: Outcome = { kind, id: randomUUID(), sentAt: Date.now() };
    outcomes.push(outcome);
    try {
      const response = await request(`${options.url}/vault-forward`, {
        method: 'POST',
        dispatcher: agent,
        reset: true,
        // Bounded: a request held by the killed process must fail, not hang the test.
        headersTimeout: 20_000,
        bodyTimeout: 20_000,
        headers: {
          authorization: `Bearer ${options.token}`,
          'content-type': 'application/json',
          'x-vault-forward-url': `${options.target}/${kind}`,
          'x-vault-forward-http-method': 'POST',
          ...(kind === 'queued' ? { prefer: 'respond-async' } : {}),
        },
        body: JSON.stringify({ id: outcome.id }),
      });
      const text = await response.body.text();
      outcome.status = response.statusCode;
      outcome.requestId = String(response.headers['x-request-id']);
      outcome.body = text.startsWith('{') ? JSON.parse(text) : text;
    } catch (error) {
      outcome.error = (error as { code?: string }).code ?? String(error);
    }
  };
  const loops = Array.from({ length: options.loops }, async (_, n) => {
    for (let i = n; !stopping; i++) await send(i % 2 === 0 ? 'sync' : 'queued');
  });
  return {
    outcomes,
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
      await agent.close();
    },
  };
}
