import { AddressInfo, createServer, Server, Socket, connect } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (PostgreSQL, Redis), so a test can make that
 * server unreachable for the service under test and bring it back, while the real server keeps
 * running for everything else.
 *
 *   cut()     drops every open connection and refuses new ones (connection refused, as a stopped server)
 *   blackhole() keeps accepting connections but never forwards a byte (a hung network path)
 *   slow(ms)  connections made from now on get each reply ms late (a busy server or machine)
 *   restore() forwards again
 */
export class TcpProxy {
  private server!: Server;
  private readonly sockets = new Set<Socket>();
  private mode: 'open' | 'blackhole' = 'open';
  private replyDelayMs = 0;
  /** Replies (chunks) handed on late by slow(), counted as each reaches its client: a late reply is an event. */
  lateReplies = 0;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  static async start(targetHost: string, targetPort: number, port = 0): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetHost, targetPort);
    await proxy.listen(port);
    return proxy;
  }

  /** host:port of the proxy, for a connection URL. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  private listen(port: number): Promise<void> {
    this.server = createServer((client) => this.accept(client));
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  private accept(client: Socket): void {
    this.track(client);
    if (this.mode === 'blackhole') return; // accepted, never answered
    const upstream = connect(this.targetPort, this.targetHost);
    this.track(upstream);
    client.pipe(upstream);
    const delay = this.replyDelayMs;
    // Equal delays keep the replies in order: timers of one duration fire in the order they were set.
    if (delay > 0)
      upstream.on('data', (chunk: Buffer) =>
        setTimeout(() => {
          if (client.writable) client.write(chunk);
          this.lateReplies++;
        }, delay),
      );
    else upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.once('error', close);
    upstream.once('error', close);
    client.once('close', close);
    upstream.once('close', close);
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** Drops every connection and stops listening: new connections are refused. */
  async cut(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Drops every connection; new ones are accepted and then hang. */
  async blackhole(): Promise<void> {
    this.mode = 'blackhole';
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (!this.server.listening) await this.listen(this.port);
  }

  /** Connections accepted from now on get every reply `ms` late; 0 forwards at once again. */
  slow(ms: number): void {
    this.replyDelayMs = ms;
  }

  /** Forwards again, on the same port. */
  async restore(): Promise<void> {
    this.mode = 'open';
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (!this.server.listening) await this.listen(this.port);
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
