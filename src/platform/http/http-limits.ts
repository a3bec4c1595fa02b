import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import type { HttpServerLimits } from '../config/config';

/**
 * The options that can only be given when a Node server is created. Node checks its headers and
 * request timeouts on a timer (30 s by default), so a short timeout would be enforced up to 30 s
 * late: the timer runs at half the headers timeout, at most every second.
 */
export function serverOptions(limits: HttpServerLimits): Pick<ServerOptions, 'connectionsCheckingInterval'> {
  return { connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 2))) };
}

/**
 * Applies the timeouts and the per-address connection cap to a server built with serverOptions.
 * Without them a client that trickles a header line every few seconds holds its socket for good,
 * and tens of thousands of such sockets (no token needed) exhaust the process's file descriptors.
 * maxHeadersCount stays Node's: headers beyond it are dropped silently rather than refused, and the
 * header bytes are already bounded by maxHeaderSize.
 */
export function applyServerLimits(server: Server, limits: HttpServerLimits, name: string): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  if (limits.maxConnectionsPerIp > 0) capConnectionsPerAddress(server, limits.maxConnectionsPerIp, name);
}

/**
 * Counts open connections per remote address as they are accepted and destroys, at once and without
 * an answer, those beyond `max`: writing a 503 would cost the very resources being protected. Behind
 * a proxy every connection has the proxy's address, hence the setting (0 = off).
 */
function capConnectionsPerAddress(server: Server, max: number, name: string): void {
  const logger = new Logger(name);
  const open = new Map<string, { count: number; warned: boolean }>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return; // already gone
    const entry = open.get(address) ?? { count: 0, warned: false };
    if (entry.count >= max) {
      // Once per episode (until that address holds nothing): a flood must not flood the log too.
      if (!entry.warned) {
        entry.warned = true;
        logger.warn(`connections from ${address} beyond ${max} (HTTP_MAX_CONNECTIONS_PER_IP) are being closed`);
      }
      socket.destroy();
      return;
    }
    entry.count++;
    open.set(address, entry);
    socket.once('close', () => {
      if (--entry.count === 0) open.delete(address);
    });
  });
}
