import { AddressInfo, connect, createServer, Server, Socket } from 'node:net';

/** Startup-phase requests that a client may send before its startup message (each has no type byte either). */
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;

/**
 * What the clients behind a PostgresCounter asked PostgreSQL, read from the frontend side of the wire protocol
 * (https://www.postgresql.org/docs/current/protocol-message-formats.html): one round trip per Sync (the end of an
 * extended-protocol exchange) or simple Query, one statement per Execute or simple Query.
 */
export interface PostgresCounts {
  roundTrips: number;
  statements: number;
}

/**
 * A TCP proxy on 127.0.0.1 in front of a real PostgreSQL that counts, as the bytes pass, what its clients ask: the
 * connection seam, independent of the client library (a service's pool, BullMQ's, the test's own). Only framing
 * is read (a type byte and a length per message, after an untyped startup message); nothing is changed.
 */
export class PostgresCounter {
  private server!: Server;
  private readonly sockets = new Set<Socket>();
  private readonly counts: PostgresCounts = { roundTrips: 0, statements: 0 };
  port = 0;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** A counter in front of the server of `databaseUrl`. */
  static async start(databaseUrl: string): Promise<PostgresCounter> {
    const target = new URL(databaseUrl);
    const counter = new PostgresCounter(target.hostname, Number(target.port || 5432));
    counter.server = createServer((client) => counter.accept(client));
    await new Promise<void>((resolve, reject) => {
      counter.server.once('error', reject);
      counter.server.listen(0, '127.0.0.1', () => resolve());
    });
    counter.port = (counter.server.address() as AddressInfo).port;
    return counter;
  }

  /** `databaseUrl` with its host and port replaced by the counter's. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  /** The counts so far (a copy). */
  read(): PostgresCounts {
    return { ...this.counts };
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const upstream = connect(this.targetPort, this.targetHost);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    }
    let pending: Buffer = Buffer.alloc(0);
    let startup = true;
    client.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let at = 0;
      for (;;) {
        if (startup) {
          if (pending.length - at < 8) break;
          const length = pending.readInt32BE(at);
          if (pending.length - at < length) break;
          const code = pending.readInt32BE(at + 4);
          startup = code === SSL_REQUEST || code === GSSENC_REQUEST || code === CANCEL_REQUEST;
          at += length;
          continue;
        }
        if (pending.length - at < 5) break;
        const length = pending.readInt32BE(at + 1);
        if (pending.length - at < 1 + length) break;
        this.count(String.fromCharCode(pending[at]));
        at += 1 + length;
      }
      pending = pending.subarray(at);
      upstream.write(chunk);
    });
    upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.once('error', close);
      socket.once('close', close);
    }
  }

  private count(type: string): void {
    if (type === 'S' || type === 'Q') this.counts.roundTrips++;
    if (type === 'E' || type === 'Q') this.counts.statements++;
  }
}
