import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Authenticator } from '../../merchants/auth/authenticator.service';
import type { Principal } from '../../merchants/access/principal';
import type { RouteAccess } from '../../merchants/access/scopes';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemException } from '../../../platform/problem/problem';
import { problemResponse } from '../../../platform/problem/problem.filter';
import { ForwardIdempotency } from '../idempotency/forward-idempotency';
import { REQUEST_LOG, RequestLog, requestIdFor } from '../../../platform/logging/logging.module';
import { ForwardJobsService, refuseQueuedOnlyHeaders } from '../jobs/forward-jobs.service';
import { prefersAsync } from '../jobs/attempts/retry-policy';
import { FORWARD_ROUTE, isForwardPath } from './forward-route';
import { ForwardingService } from '../request/forwarding.service';
import { InflightBytes, InflightLease } from '../sending/inflight-bytes';

/** Request bodies above this are refused with 413 (the forward route's own limit). */
const FORWARD_BODY_LIMIT_BYTES = 1024 * 1024;

const ACCESS = { kind: 'merchant', scope: 'vault-forwards.write' } as const satisfies RouteAccess;

/**
 * POST /vault-forward on Node's own request and response, ahead of fastify and Nest's pipeline: the
 * route is the product's hot path, and that pipeline (routing, middleware, guards, interceptors,
 * async context) cost more than everything the forward itself does (docs/benchmarks-history.md). It applies
 * the same rules as every other route through the same pieces: Authenticator (the AuthGuard's
 * rules), problemResponse (the ProblemFilter's rendering), and a request log line like pino-http's.
 * The controller keeps the route's OpenAPI description.
 */
@Injectable()
export class ForwardHttpHandler {
  private readonly logger = new Logger('Forwarding');

  constructor(
    private readonly authenticator: Authenticator,
    private readonly forwarding: ForwardingService,
    private readonly inflight: InflightBytes,
    private readonly jobs: ForwardJobsService,
    @Inject(REQUEST_LOG) private readonly requestLog: RequestLog,
    private readonly idempotency: ForwardIdempotency,
  ) {}

  /** Every spelling of the path that fastify would route to POST /vault-forward (isForwardPath). */
  static matches(req: IncomingMessage): boolean {
    return req.method === 'POST' && req.url !== undefined && isForwardPath(req.url);
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const requestId = requestIdFor(req);
    this.requestLog(req, res, requestId);
    res.setHeader('x-request-id', requestId);
    const { lease, settled } = this.inflight.leaseUntilAnswered(res);
    this.serve(req, res, requestId, lease)
      .catch((error: unknown) => this.fail(req, res, requestId, error))
      .finally(settled);
  }

  private async serve(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    lease: InflightLease,
  ): Promise<void> {
    const principal = await this.authenticator.authenticate(req.headers, ACCESS);
    lease.forMerchant(principal.merchantAccountId!);
    const body = await readBody(req, FORWARD_BODY_LIMIT_BYTES, lease);
    if (prefersAsync(req.headers.prefer)) return this.queue(req, res, requestId, principal, body);
    refuseQueuedOnlyHeaders(req.headers);
    // The forward's id names its record, so it must be unique: it is the request id unless the caller
    // chose that (x-request-id, kept for tracing), in which case the forward gets its own.
    const forwardId = req.headers['x-request-id'] === undefined ? requestId : randomUUID();
    // Idempotency-Key (src/modules/forwarding/idempotency/): a repeat within 24 h replays the stored answer instead of sending.
    const response = await this.idempotency.around(principal.merchantAccountId!, req.headers, body, () =>
      this.forwarding.forward({
        merchantAccountId: principal.merchantAccountId!,
        apiKeyId: principal.keyId,
        requestId: forwardId,
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body,
        lease,
      }),
    );
    // Ours last: the target's own x-request-id does not replace the one our log line carries.
    const headers = { ...response.headers, 'x-request-id': requestId, 'x-vault-forward-request-id': forwardId };
    if (!(response.body instanceof Readable)) {
      res.writeHead(response.status, { ...headers, 'content-length': response.body.length });
      res.end(response.body);
      return;
    }
    res.writeHead(response.status, headers);
    // A failure now (limit, reset, timeout) can only cut the connection: the status is out. The
    // forward record says what happened. (pipe, not pipeline: that costs an aborted
    // AbortController per request.)
    const stream = response.body;
    stream.once('error', () => res.destroy());
    res.once('close', () => stream.destroy());
    stream.pipe(res);
  }

  /** Prefer: respond-async (RFC 7240): planned and checked like a synchronous forward, then stored and queued. */
  private async queue(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    principal: Principal,
    body: Buffer,
  ): Promise<void> {
    const { job, replayed } = await this.jobs.submit({
      merchantAccountId: principal.merchantAccountId!,
      apiKeyId: principal.keyId,
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body,
    });
    const payload = JSON.stringify(job);
    // An Idempotency-Key repeat (src/modules/forwarding/idempotency/) answers 200 with the job the first request created.
    res.writeHead(replayed ? 200 : 202, {
      ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(payload),
      location: `${FORWARD_ROUTE}/jobs/${job.id}`,
      'preference-applied': 'respond-async',
      'x-request-id': requestId,
    });
    res.end(payload);
  }

  private fail(req: IncomingMessage, res: ServerResponse, requestId: string, error: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const problem = problemResponse(
      error,
      req.url ?? FORWARD_ROUTE,
      requestId,
      this.logger,
      isForwardPath,
      req.headers.accept,
    );
    // An unread request body (refused before or while reading it) is not worth draining.
    if (!req.complete) problem.headers.connection = 'close';
    res.writeHead(problem.status, { ...problem.headers, 'content-length': Buffer.byteLength(problem.body) });
    res.end(problem.body);
  }
}

function readBody(req: IncomingMessage, limit: number, lease: InflightLease): Promise<Buffer> {
  const tooLarge = () =>
    new ProblemException(CommonErrors.payloadTooLarge, `The request body is larger than ${limit} bytes.`);
  if (Number(req.headers['content-length']) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (error: ProblemException) => {
      req.off('data', onData);
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return stop(tooLarge());
      try {
        lease.take(chunk.length, { location: 'body', name: 'body', message: 'no room for the request body now' });
      } catch (error) {
        return stop(error as ProblemException);
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    // A caller that goes away mid-body gets no answer; nothing was sent downstream.
    req.once('error', reject);
  });
}
