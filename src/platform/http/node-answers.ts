import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/**
 * An answer written on Node's own response, for the routes served ahead of fastify: a whole body with its length,
 * or a stream piped with backpressure, which once the status is out can only cut the connection when it fails.
 */
export function writeAnswer(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  body: Buffer | Readable,
): void {
  if (!(body instanceof Readable)) {
    res.writeHead(status, { ...headers, 'content-length': body.length }).end(body);
    return;
  }
  res.writeHead(status, headers);
  body.once('error', () => res.destroy());
  res.once('close', () => body.destroy());
  body.pipe(res);
}

/**
 * A rendered problem (problemResponse) written on Node's own response; the connection closes after it when the
 * request's body was not read whole (refused before or while reading it), which is not worth draining. Nothing is
 * written once an answer has begun: the connection is cut instead.
 */
export function writeProblem(
  req: IncomingMessage,
  res: ServerResponse,
  problem: { status: number; headers: Record<string, string>; body: string },
): void {
  if (res.headersSent) return void res.destroy();
  const headers: OutgoingHttpHeaders = { ...problem.headers, 'content-length': Buffer.byteLength(problem.body) };
  if (!req.complete) headers.connection = 'close';
  res.writeHead(problem.status, headers).end(problem.body);
}
