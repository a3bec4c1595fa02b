import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Dispatcher } from 'undici';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { Metrics } from '../../../platform/metrics/metrics.service';
import { ProblemDefinition, ProblemException, ProblemFieldError } from '../../../platform/problem/problem';
import { ForwardAuthenticationsService } from '../../forwarding-setup/authentication-methods/forward-authentications.service';
import { BlockedAddressError } from '../../forwarding-setup/targets/addresses';
import { OutboundErrors } from './outbound.errors';
import { CONNECT_TIMEOUT_MS, DispatcherPool } from './dispatcher-pool';
import { HOP_BY_HOP, type OutboundRequest } from './outbound-request';

const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
/** Answers declaring at most this many bytes are read whole before we reply; larger ones stream. */
const BUFFERED_RESPONSE_BYTES = 64 * 1024;

export type DownstreamRequest = OutboundRequest;

export interface DownstreamResponse {
  status: number;
  headers: Record<string, string | string[]>;
  /**
   * Whole, or a stream that fails with a ProblemException (too large, reset, timeout) after the
   * status has gone out; whoever sends it on then has to cut the connection.
   */
  body: Buffer | Readable;
}

/**
 * The whole-request deadline (connect, headers and body together): one timer per request, whose
 * AbortSignal is undici's `signal`. When it fires before the answer, undici fails the request with
 * the signal's reason (DeadlineExceeded); after it, undici destroys the answer's body. `clear` runs on
 * every ending. A real AbortSignal, not a lighter look-alike emitter: undici 8 hands anything with an
 * `aborted` property to Node's addAbortListener, which accepts only real signals (docs/decisions.md).
 */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;

  constructor(ms: number) {
    this.timer = setTimeout(() => this.controller.abort(new DeadlineExceeded()), ms);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

class DeadlineExceeded extends Error {
  constructor() {
    super('x-vault-forward-timeout passed');
    this.name = 'DeadlineExceeded';
  }
}

/**
 * A failure of the request to the downstream. `reachedDownstream` is false only when nothing can
 * have reached the target (no connection: the name did not resolve, refused, connect timeout, TLS
 * handshake, a blocked address, a request undici would not send); a retry of a non-idempotent
 * method is safe only then. A reset or a timeout may have come after the request went out: true.
 */
export class DownstreamProblem extends ProblemException {
  constructor(
    definition: ProblemDefinition,
    detail: string,
    readonly reachedDownstream: boolean,
    errors?: ProblemFieldError[],
  ) {
    super(definition, detail, errors);
  }
}

/** undici/Node codes that mean no connection was made, so no byte of the request left. */
const NOT_CONNECTED = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function notConnected(code: string | undefined): boolean {
  return code !== undefined && (NOT_CONNECTED.has(code) || isTlsHandshakeCode(code));
}

function isTlsHandshakeCode(code: string): boolean {
  return code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT|SELF_SIGNED|UNABLE_TO/.test(code);
}

function timedOutBy(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    if (current instanceof DeadlineExceeded) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return (error as { code?: string }).code;
}

function blocked(error: unknown): BlockedAddressError | null {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    if (current instanceof BlockedAddressError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * The outbound HTTP client: undici agents that keep a keep-alive connection pool per origin, reused
 * across requests, taken from a DispatcherPool by trust and client identity. Guarded agents resolve
 * names through the SSRF guard and connect to the address they checked; only FORWARD_INSECURE_HOSTS
 * get agents without it. A mutual-TLS identity has agents of its own (modules/forwarding/sending/dispatcher-pool.ts).
 * Redirects are never followed. Short answers (a small declared length, or ended by the time the
 * target pauses: the usual API response) are read whole first, so a failure midway is still a clean
 * problem; others stream back as they arrive, cut off at 10 MiB (docs/decisions/0027).
 */
@Injectable()
export class DownstreamClient implements OnModuleDestroy {
  readonly pool: DispatcherPool;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    authentications: ForwardAuthenticationsService,
    private readonly metrics: Metrics,
  ) {
    const ca = config.forwardExtraCaFile
      ? [...rootCertificates, readFileSync(config.forwardExtraCaFile, 'utf8')]
      : undefined;
    this.pool = new DispatcherPool(ca);
    // A method updated or deleted in any process: its connections (and TLS sessions) go at once.
    authentications.onMethodChanged((methodId) => this.pool.dropMethod(methodId));
  }

  async onModuleDestroy(): Promise<void> {
    await this.pool.close();
  }

  async send(request: DownstreamRequest): Promise<DownstreamResponse> {
    const agent = this.pool.get(request.trusted, request.identity);
    // x-vault-forward-timeout is the whole budget, headers and body together.
    const deadline = new Deadline(request.timeoutMs);
    const sent = performance.now();
    let response: Dispatcher.ResponseData;
    try {
      response = await agent.request({
        origin: request.url.origin,
        path: `${request.url.pathname}${request.url.search}`,
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: deadline.signal,
        // The deadline governs; undici's own timers only back it up.
        headersTimeout: request.timeoutMs + 1_000,
        bodyTimeout: request.timeoutMs + 1_000,
      });
    } catch (error) {
      deadline.clear();
      throw this.translate(error, request);
    }
    this.metrics.downstreamAnswered((performance.now() - sent) / 1000);

    if (request.method === 'HEAD') {
      deadline.clear();
      // The length a HEAD answer declares is the GET body's; there is no body to read.
      response.body.resume();
      return { status: response.statusCode, headers: responseHeaders(response.headers, false), body: Buffer.alloc(0) };
    }
    const declared =
      response.headers['content-length'] === undefined ? NaN : Number(response.headers['content-length']);
    if (declared > MAX_RESPONSE_BYTES) {
      deadline.clear();
      response.body.destroy();
      throw tooLarge();
    }
    let head: { chunks: Buffer[]; size: number; ended: boolean };
    try {
      head = await this.readHead(response.body, declared <= BUFFERED_RESPONSE_BYTES, request);
    } catch (error) {
      deadline.clear();
      throw error;
    }
    if (head.ended) {
      deadline.clear();
      return {
        status: response.statusCode,
        headers: responseHeaders(response.headers, false),
        body: Buffer.concat(head.chunks, head.size),
      };
    }
    return {
      status: response.statusCode,
      // A declared length (≤ 10 MiB) is kept, so the caller can see a cut-off answer for what it is.
      headers: responseHeaders(response.headers, Number.isFinite(declared)),
      body: this.rest(response.body, head, deadline, request),
    };
  }

  /**
   * Reads what the downstream has sent so far: to the end when it declared a small length, else
   * until it pauses (one turn of the event loop without data) or passes BUFFERED_RESPONSE_BYTES.
   * Most API answers end within that, and are then answered whole with a length; the rest stream.
   */
  private readHead(
    body: Dispatcher.ResponseData['body'],
    toTheEnd: boolean,
    request: DownstreamRequest,
  ): Promise<{ chunks: Buffer[]; size: number; ended: boolean }> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let pause: NodeJS.Immediate | undefined;
      const stop = () => {
        if (pause) clearImmediate(pause);
        body.off('data', onData);
        body.off('end', onEnd);
        body.off('error', onError);
      };
      const settle = (ended: boolean) => {
        stop();
        if (!ended) body.pause();
        resolve({ chunks, size, ended });
      };
      const onData = (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          stop();
          body.destroy();
          reject(tooLarge());
        } else if (!toTheEnd && size > BUFFERED_RESPONSE_BYTES) {
          settle(false);
        } else if (!toTheEnd && !pause) {
          pause = setImmediate(() => settle(false));
        }
      };
      const onEnd = () => settle(true);
      const onError = (error: unknown) => {
        stop();
        reject(this.translate(error, request));
      };
      body.on('data', onData);
      body.once('end', onEnd);
      body.once('error', onError);
    });
  }

  /**
   * The head already read, then the rest as it arrives, within the size limit and the deadline, with
   * backpressure. Destroying it (the caller went away) lets go of the target's connection at once.
   */
  private rest(
    body: Dispatcher.ResponseData['body'],
    head: { chunks: Buffer[]; size: number },
    deadline: Deadline,
    request: DownstreamRequest,
  ): Readable {
    let size = head.size;
    const out = new Readable({
      read: () => void body.resume(),
      destroy: (error, callback) => {
        deadline.clear();
        body.destroy();
        callback(error);
      },
    });
    for (const chunk of head.chunks) out.push(chunk);
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES) out.destroy(tooLarge());
      else if (!out.push(chunk)) body.pause();
    });
    body.once('end', () => {
      deadline.clear();
      out.push(null);
    });
    body.once('error', (error) => out.destroy(this.translate(error, request)));
    return out;
  }

  private translate(error: unknown, request: DownstreamRequest): DownstreamProblem {
    const host = request.url.host;
    const guard = blocked(error);
    if (guard) {
      return new DownstreamProblem(
        OutboundErrors.targetAddressForbidden,
        `${guard.hostname} resolves to a ${guard.reason} address, which may not be forwarded to.`,
        false,
        [{ location: 'header', name: 'x-vault-forward-url', message: `resolves to a ${guard.reason} address` }],
      );
    }
    if (timedOutBy(error)) return timedOut(request);
    const code = errorCode(error);
    if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED') {
      // Our own checks should have refused it first; undici's message names a header, never a value.
      const message = (error as Error).message;
      return new DownstreamProblem(
        OutboundErrors.invalidHeader,
        `The request cannot be sent as written (${message}); nothing was sent.`,
        false,
        [{ location: 'header', name: 'x-vault-forward-header-*', message }],
      );
    }
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_ABORTED')
      return timedOut(request);
    const what =
      code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'its name does not resolve'
        : code === 'ECONNREFUSED'
          ? 'the connection was refused'
          : code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE'
            ? 'the connection was reset'
            : code === 'UND_ERR_CONNECT_TIMEOUT'
              ? `no connection within ${CONNECT_TIMEOUT_MS / 1000} s`
              : code && isTlsHandshakeCode(code)
                ? `the TLS handshake failed (${code})`
                : `the request failed (${code ?? 'network error'})`;
    return new DownstreamProblem(
      OutboundErrors.downstreamUnreachable,
      `${host} could not be reached: ${what}.`,
      !notConnected(code),
    );
  }
}

function timedOut(request: DownstreamRequest): DownstreamProblem {
  return new DownstreamProblem(
    OutboundErrors.downstreamTimeout,
    `${request.url.host} did not answer within ${request.timeoutMs / 1000} s.`,
    true,
  );
}

function tooLarge(): DownstreamProblem {
  return new DownstreamProblem(
    OutboundErrors.downstreamResponseTooLarge,
    `The downstream response is larger than ${MAX_RESPONSE_BYTES} bytes.`,
    true,
  );
}

/**
 * The downstream's headers, less hop-by-hop ones, those `connection` names, set-cookie, (unless kept)
 * length, and any x-vault-forward-* header: those are ours, and a target must not be able to pass
 * its answer off as an error of this service.
 */
function responseHeaders(
  headers: Record<string, string | string[] | undefined>,
  keepLength: boolean,
): Record<string, string | string[]> {
  const connection = String(headers.connection ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (
      value === undefined ||
      HOP_BY_HOP.has(name) ||
      connection.includes(name) ||
      name === 'set-cookie' ||
      (name === 'content-length' && !keepLength) ||
      name.startsWith('x-vault-forward-')
    )
      continue;
    out[name] = value;
  }
  return out;
}
