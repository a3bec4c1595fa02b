import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../../../platform/config/config.module';
import type { AppConfig } from '../../../platform/config/config';
import { webOrigin } from '../../../platform/config/web-origin';
import { isUuid } from '../../../platform/http/uuid';
import { ProblemValidationPipe } from '../../../platform/http/validation.pipe';
import { REQUEST_LOG, RequestLog, requestIdFor } from '../../../platform/logging/logging.module';
import { Metrics } from '../../../platform/metrics/metrics.service';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemException } from '../../../platform/problem/problem';
import { problemResponse } from '../../../platform/problem/problem.filter';
import { SecureFieldsOrigins } from '../../merchants/accounts/secure-fields-origins';
import { CheckoutSessionErrors } from '../checkout-sessions/checkout-sessions.errors';
import { CheckoutSessionsService } from '../checkout-sessions/checkout-sessions.service';
import { CheckoutSessionFieldsDto, CheckoutSessionResponse } from '../checkout-sessions/dto/checkout-session.dto';
import { Answer, FRAME_PAGES, SecureFieldsBundle } from './secure-fields-bundle';
import { SecureFieldsErrors } from './secure-fields.errors';

/** The header naming the page that embeds the frames; the controller frame sends its own parentOrigin. */
const PARENT_ORIGIN_HEADER = 'x-secure-fields-parent-origin';

/** A card submission is a few hundred bytes. */
const SUBMISSION_BODY_LIMIT_BYTES = 16 * 1024;

/** The DTO nests two levels; anything deeper is refused before class-transformer walks it. */
const MAX_SUBMISSION_DEPTH = 8;

const SUBMISSION_PATH = /^\/checkout\/sessions\/([^/]{1,100})\/fields$/;

/** Each refusal's outcome in the metric and the log line; anything else is `error`. */
const OUTCOMES = new Map<string, string>([
  [CheckoutSessionErrors.notFound.code, 'not_found'],
  [CheckoutSessionErrors.expired.code, 'expired'],
  [CheckoutSessionErrors.secureFieldsOriginRefused.code, 'origin_refused'],
  [CheckoutSessionErrors.secureFieldsTriesExhausted.code, 'too_many_tries'],
  [CommonErrors.validationFailed.code, 'invalid'],
  [CommonErrors.invalidJson.code, 'invalid'],
  [CommonErrors.unsupportedMediaType.code, 'invalid'],
  [CommonErrors.payloadTooLarge.code, 'invalid'],
]);

/**
 * Everything the API process answers on SECURE_FIELDS_ORIGIN's host (decision 0140), on Node's request ahead of
 * fastify, so none of the API's routes exists there: the two frame pages (their CSP's frame-ancestors the
 * `parentOrigin` some merchant lists, else a 403 page), the hashed assets, and the card submission
 * `PUT /checkout/sessions/{id}/fields` without a merchant token, which CheckoutSessionsService admits (live session,
 * origin listed by its merchant, at most 10 tries) and collects with the same `setFields` as the API's route.
 * Anything else is a 404 problem.
 */
@Injectable()
export class SecureFieldsHttpHandler {
  private readonly logger = new Logger('SecureFields');
  private readonly bundle = SecureFieldsBundle.located();
  private readonly validation = new ProblemValidationPipe();
  /** host[:port] as a browser sends it for the origin; null: the feature is off. */
  private readonly host: string | null;
  private readonly hostname: string | null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly sessions: CheckoutSessionsService,
    private readonly origins: SecureFieldsOrigins,
    private readonly metrics: Metrics,
    @Inject(REQUEST_LOG) private readonly requestLog: RequestLog,
  ) {
    const origin = config.secureFieldsOrigin === null ? null : new URL(config.secureFieldsOrigin);
    this.host = origin?.host ?? null;
    this.hostname = origin?.hostname ?? null;
    if (origin && !this.bundle.available())
      this.logger.warn('No Secure Fields bundle (dist/secure-fields): run `npm run build`; frame requests answer 503.');
  }

  /**
   * Whether the request is for the secure-fields origin: its Host is the origin's host[:port], or the origin's host
   * on the port this server listens on (the development default names PORT, and a server on port 0 listens elsewhere).
   */
  matches(req: IncomingMessage): boolean {
    if (this.host === null) return false;
    const host = req.headers.host?.toLowerCase();
    if (host === undefined) return false;
    return host === this.host || host === `${this.hostname}:${req.socket.localPort}`;
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const requestId = requestIdFor(req);
    this.requestLog(req, res, requestId);
    res.setHeader('x-request-id', requestId);
    this.serve(req, res, requestId).catch((error: unknown) => this.fail(req, res, requestId, error));
  }

  private async serve(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const url = req.url ?? '/';
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const query = mark < 0 ? '' : url.slice(mark + 1);
    if (req.method === 'PUT') {
      const match = SUBMISSION_PATH.exec(path);
      if (match) return this.submit(req, res, requestId, match[1]);
    } else if (req.method === 'GET') {
      if ((FRAME_PAGES as readonly string[]).includes(path))
        return this.page(res, path as (typeof FRAME_PAGES)[number], query);
      if (path.startsWith('/assets/')) return this.asset(res, path.slice('/assets/'.length));
    }
    throw routeNotFound(req);
  }

  private async page(res: ServerResponse, path: (typeof FRAME_PAGES)[number], query: string): Promise<void> {
    if (!this.bundle.available()) throw notBuilt();
    const origin = parentOriginOf(new URLSearchParams(query).get('parentOrigin'));
    const listed = origin !== null && (await this.origins.anyLists(origin));
    const answer = listed ? await this.bundle.page(path, origin) : this.bundle.refused();
    if (!answer) throw notBuilt();
    send(res, answer);
  }

  private async asset(res: ServerResponse, name: string): Promise<void> {
    if (!this.bundle.available()) throw notBuilt();
    const answer = await this.bundle.asset(name);
    if (!answer) throw new ProblemException(CommonErrors.routeNotFound, 'No such Secure Fields asset.');
    send(res, answer);
  }

  /** One log line and one count per submission, whatever its outcome; never a card value. */
  private async submit(req: IncomingMessage, res: ServerResponse, requestId: string, rawId: string): Promise<void> {
    const sessionId = decodedSegment(rawId);
    const header = req.headers[PARENT_ORIGIN_HEADER];
    const parentOrigin = parentOriginOf(typeof header === 'string' ? header : null);
    let outcome = 'error';
    try {
      // Counted first: a malformed submission is a try too.
      const merchant = await this.sessions.admitSecureFieldsTry(sessionId, parentOrigin);
      const body = await readJsonBody(req);
      const fields = (await this.validation.transform(body, {
        type: 'body',
        metatype: CheckoutSessionFieldsDto,
        data: '',
      })) as CheckoutSessionFieldsDto;
      const session = await this.sessions.setFields(merchant, sessionId, fields.payment_method);
      outcome = 'collected';
      const answer = Buffer.from(JSON.stringify(CheckoutSessionResponse.from(session)), 'utf8');
      send(res, {
        status: 200,
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        },
        body: answer,
      });
    } catch (error) {
      outcome = (error instanceof ProblemException && OUTCOMES.get(error.definition.code)) || 'error';
      throw error;
    } finally {
      this.metrics.secureFieldsSubmitted(outcome);
      this.logger.log({
        msg: `secure fields submission: ${outcome}`,
        outcome,
        checkout_session_id: isUuid(sessionId) ? sessionId : 'invalid',
        parent_origin: parentOrigin ?? (typeof header === 'string' ? 'invalid' : 'none'),
        request_id: requestId,
      });
    }
  }

  private fail(req: IncomingMessage, res: ServerResponse, requestId: string, error: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const problem = problemResponse(error, req.url, requestId, this.logger, () => false, req.headers.accept);
    if (!req.complete) problem.headers.connection = 'close';
    res.writeHead(problem.status, {
      ...problem.headers,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'content-length': Buffer.byteLength(problem.body),
    });
    res.end(problem.body);
  }
}

function send(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, { ...answer.headers, 'content-length': answer.body.length });
  res.end(answer.body);
}

/** The parent origin, normalised as merchants' lists are; null when absent or not an origin. */
function parentOriginOf(raw: string | null): string | null {
  if (raw === null) return null;
  const check = webOrigin(raw.trim());
  return 'origin' in check ? check.origin : null;
}

function decodedSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function routeNotFound(req: IncomingMessage): ProblemException {
  return new ProblemException(
    CommonErrors.routeNotFound,
    `The secure-fields origin serves the Secure Fields frames and card submissions only, not ${req.method} ${
      (req.url ?? '/').split('?')[0]
    }.`.slice(0, 300),
  );
}

function notBuilt(): ProblemException {
  return new ProblemException(
    SecureFieldsErrors.notBuilt,
    'The Secure Fields frames are not built on this installation.',
  );
}

/** The body as JSON (application/json only, at most SUBMISSION_BODY_LIMIT_BYTES, nested at most MAX_SUBMISSION_DEPTH). */
async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') {
    req.resume();
    throw new ProblemException(CommonErrors.unsupportedMediaType, 'A card submission is application/json.');
  }
  const tooLarge = () =>
    new ProblemException(
      CommonErrors.payloadTooLarge,
      `The request body is larger than ${SUBMISSION_BODY_LIMIT_BYTES} bytes.`,
    );
  if (Number(req.headers['content-length']) > SUBMISSION_BODY_LIMIT_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > SUBMISSION_BODY_LIMIT_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  for (const chunk of chunks) chunk.fill(0);
  let value: unknown;
  try {
    value = text.length === 0 ? {} : JSON.parse(text);
  } catch {
    throw new ProblemException(CommonErrors.invalidJson, 'The request body is not valid JSON.');
  }
  if (deeperThan(value, MAX_SUBMISSION_DEPTH))
    throw new ProblemException(CommonErrors.validationFailed, 'The request body nests too deep.', [
      { location: 'body', name: 'body', message: `nests deeper than ${MAX_SUBMISSION_DEPTH} levels` },
    ]);
  return value;
}

function deeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max === 0) return true;
  return Object.values(value).some((item) => deeperThan(item, max - 1));
}
