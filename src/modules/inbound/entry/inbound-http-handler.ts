import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { pathWithoutAuthenticationData } from '../../../platform/card-data/authentication-data';
import { applied, Edit } from '../../../platform/card-data/authentication-data-names';
import { holdsCardNumber, maskCardNumbers } from '../../../platform/card-data/card-numbers';
import { writeAnswer, writeProblem } from '../../../platform/http/node-answers';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { REQUEST_LOG, RequestLog, requestIdFor } from '../../../platform/logging/logging.module';
import { ProblemException } from '../../../platform/problem/problem';
import { problemResponse, toProblem } from '../../../platform/problem/problem.filter';
import { InflightBytes, InflightLease } from '../../forwarding/sending/inflight-bytes';
import { BodyUnparseable, readBody } from '../bodies/body-leaves';
import { cardSlots, FieldRefused } from '../bodies/card-slots';
import { InboundOutcome } from '../records/inbound-request.entity';
import { InboundRequestBodies } from '../records/inbound-request-bodies';
import { InboundRequestsRepository } from '../records/inbound-requests.repository';
import { credentialHeader } from '../routes/caller-authentication';
import { compiledMapping } from '../routes/field-mappings';
import type { EntryRouteRow } from '../routes/inbound-routes.repository';
import { InboundRoutesService } from '../routes/inbound-routes.service';
import { CallerVerification, VerifiedCaller } from './caller-verification';
import { InboundCards, StoredCards, unusable } from './inbound-cards';
import { inboundText, readWhole } from './inbound-body';
import { InboundErrors } from './inbound.errors';
import { InboundMetrics } from './inbound-metrics';
import { InboundSender, UpstreamSigning } from './inbound-sender';
import { checkRoutedPath, inboundTarget, InboundTarget, isInboundPath } from './inbound-target';
import { InboundRouteErrors } from '../routes/inbound-routes.errors';

/** What one request has got to, for its record when it fails. */
interface Attempt {
  recordId: string;
  requestId: string;
  target: InboundTarget | null;
  route: EntryRouteRow | null;
  caller: VerifiedCaller | null;
  stored: StoredCards | null;
  upstreamStatus: number | null;
  /** The request as it went to the upstream, and the answer as it went back: kept when the route asks. */
  sent: Exchanged | null;
  answered: Exchanged | null;
}

type Exchanged = { body: Buffer; headers: Record<string, string | string[]> };

/**
 * /vault-inbound/{route_id}/{path…} on Node's own request and response, ahead of fastify, as POST /vault-forward is
 * (decision 0153): the body must be read as bytes, whatever its type, and only after the caller is known. In order:
 * the route (of any merchant account: its id is the address), its method and path, no card outside the body, the
 * caller (before a byte of the body is read), the body within the route's limit, the body's signature, its content
 * coding and charset, its leaves, the cards (the one detector and the route's mappings), stored; then the request
 * with ids in their place goes on to the merchant's upstream, signed, and the masked answer comes back. Whatever
 * fails is a problem, and nothing is sent on. A request whose caller proved itself gets a record.
 */
@Injectable()
export class InboundHttpHandler {
  private readonly logger = new Logger('Inbound');

  constructor(
    private readonly routes: InboundRoutesService,
    private readonly callers: CallerVerification,
    private readonly cards: InboundCards,
    private readonly sender: InboundSender,
    private readonly records: InboundRequestsRepository,
    private readonly bodies: InboundRequestBodies,
    private readonly metrics: InboundMetrics,
    private readonly inflight: InflightBytes,
    @Inject(REQUEST_LOG) private readonly requestLog: RequestLog,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  static matches(req: IncomingMessage): boolean {
    return req.url !== undefined && isInboundPath(req.url);
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const requestId = requestIdFor(req);
    this.requestLog(req, res, requestId);
    res.setHeader('x-request-id', requestId);
    const { lease, settled } = this.inflight.leaseUntilAnswered(res);
    const attempt: Attempt = {
      recordId: randomUUID(),
      requestId,
      target: null,
      route: null,
      caller: null,
      stored: null,
      upstreamStatus: null,
      sent: null,
      answered: null,
    };
    this.serve(req, res, requestId, lease, attempt)
      .catch((error: unknown) => this.fail(req, res, requestId, error, attempt))
      .finally(settled);
  }

  private async serve(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    lease: InflightLease,
    attempt: Attempt,
  ): Promise<void> {
    const target = inboundTarget(req.url!);
    if (target === null)
      throw new ProblemException(
        InboundRouteErrors.notFound,
        'The path names no inbound route: /vault-inbound/{route_id}/….',
      );
    attempt.target = target;
    const route = await this.routes.forEntry(target.routeId);
    attempt.route = route;
    const method = req.method ?? 'GET';
    if (!route.methods.includes(method))
      throw new ProblemException(
        InboundErrors.methodNotAllowed,
        `The route takes ${route.methods.join(', ')}.`,
        undefined,
        {
          allow: route.methods.join(', '),
        },
      );
    checkRoutedPath(target.path, route.path_prefixes);
    refuseCardsOutsideBody(target, req, [
      credentialHeader(route.caller_authentication),
      this.config.inboundClientCertHeader,
    ]);
    const caller = await this.callers.beforeBody(route, req.headers);
    // A caller that signs its body has proved nothing before its signature checks out: until then, no record.
    if (route.caller_authentication.kind !== 'hmac') attempt.caller = caller;
    lease.forMerchant(route.merchant_account_id);
    const raw = await readWhole(req, route.max_body_bytes, lease);
    this.callers.withBody(route, req.headers, raw);
    attempt.caller = caller;
    const body = await inboundText(
      raw,
      req.headers['content-type'],
      req.headers['content-encoding'],
      route.max_body_bytes,
    );
    const { text: sanitised, signing } = await this.storeCards(route, body.format, body.text, attempt);
    const out = body.encode(sanitised);
    attempt.sent = {
      body: out.bytes,
      headers: out.contentType === undefined ? {} : { 'content-type': out.contentType },
    };
    const answer = await this.sender.send(
      route,
      target,
      {
        method,
        headers: req.headers,
        body: out.bytes,
        contentType: out.contentType,
        recordId: attempt.recordId,
      },
      signing,
    );
    attempt.upstreamStatus = answer.status;
    if (Buffer.isBuffer(answer.body)) attempt.answered = { body: answer.body, headers: answer.headers };
    await this.record(attempt, method, 'sent', answer.status, null);
    writeAnswer(
      res,
      answer.status,
      { ...answer.headers, 'x-request-id': requestId, 'x-vault-inbound-request-id': attempt.recordId },
      answer.body,
    );
  }

  /**
   * The body's cards stored and replaced by their ids; the text as it goes on, and the merchant's signing secrets
   * when there were cards (read before any is stored: a request that cannot be signed stores nothing).
   */
  private async storeCards(
    route: EntryRouteRow,
    format: Parameters<typeof readBody>[0],
    text: string,
    attempt: Attempt,
  ): Promise<{ text: string; signing?: UpstreamSigning }> {
    try {
      const read = readBody(format, text);
      const slots = cardSlots(read, text, format === 'text' ? {} : compiledMapping(route.field_mappings, format));
      if (slots.length === 0) return { text };
      const signing = await this.sender.signingFor(route.merchant_account_id);
      // Every refusal before the first write: the values, the cards without an expiry, the rewritten body.
      const checked = await this.cards.check(route.merchant_account_id, slots);
      replaced(text, read, this.cards.edits(checked, PREVIEW_ID, PREVIEW_ID));
      attempt.stored = await this.cards.store(route.merchant_account_id, checked);
      return { text: replaced(text, read, attempt.stored.edits), signing };
    } catch (error) {
      if (error instanceof BodyUnparseable)
        throw new ProblemException(InboundErrors.bodyUnparseable, `The body does not parse: ${error.why}.`, [
          { location: 'body', name: 'body', message: error.why },
        ]);
      if (error instanceof FieldRefused) throw unusable(error.field, error.reason);
      throw error;
    }
  }

  private async fail(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    error: unknown,
    attempt: Attempt,
  ): Promise<void> {
    const problem = toProblem(error);
    if (attempt.caller !== null)
      await this.record(
        attempt,
        req.method ?? 'GET',
        problem.status >= 500 ? 'failed' : 'refused',
        problem.status,
        problem.definition.code,
      );
    // Refused before the caller proved itself: no record (an unauthenticated flood writes no rows), counted and logged.
    else this.metrics.finished(problem.status >= 500 ? 'failed' : 'refused', false, 0, 0);
    const answer = problemResponse(error, req.url, requestId, this.logger, isInboundPath, req.headers.accept);
    answer.headers['x-vault-inbound-request-id'] = attempt.recordId;
    writeProblem(req, res, answer);
  }

  /**
   * The request's record (route, caller, ids, outcome; the bodies only when the route records them), and its count.
   * A record lost is logged, not answered.
   */
  private async record(
    attempt: Attempt,
    method: string,
    outcome: InboundOutcome,
    status: number,
    problemCode: string | null,
  ): Promise<void> {
    const stored = attempt.stored;
    this.metrics.finished(outcome, true, stored?.paymentMethodIds.length ?? 0, stored?.checkoutSessionIds.length ?? 0);
    const route = attempt.route!;
    const owner = { id: attempt.recordId, merchantAccountId: route.merchant_account_id };
    await this.bodies
      .kept(owner, this.bodies.days(route), attempt.sent, attempt.answered)
      // Bodies that cannot be kept (the vault's key store away) leave the record without them, not without a record.
      .catch((failure: unknown) => {
        this.logger.warn({
          msg: 'an inbound request’s bodies could not be kept',
          error: (failure as Error).name,
          route: { id: route.id },
        });
        return null;
      })
      .then((bodies) =>
        this.records.insert(
          {
            ...owner,
            routeId: route.id,
            requestId: attempt.requestId,
            caller: attempt.caller!.description,
            method,
            path: maskCardNumbers(pathWithoutAuthenticationData(attempt.target?.path ?? '/')).slice(0, 500),
            outcome,
            status,
            problemCode,
            upstreamStatus: attempt.upstreamStatus,
            paymentMethodIds: stored?.paymentMethodIds ?? [],
            checkoutSessionIds: stored?.checkoutSessionIds ?? [],
          },
          bodies,
        ),
      )
      .catch((failure: unknown) =>
        this.logger.warn({
          msg: 'an inbound request’s record could not be written',
          error: (failure as Error).name,
          route: { id: route.id },
        }),
      );
  }
}

/** Stands for the ids while the rewritten body is checked before anything is stored: a UUID's shape, no digit. */
const PREVIEW_ID = () => 'ffffffff-ffff-4fff-bfff-ffffffffffff';

/** The text with the edits applied, checked: what the ids took the place of is gone, and it reads as before. */
function replaced(text: string, read: ReturnType<typeof readBody>, edits: readonly Edit[]): string {
  const rewritten = applied(text, edits);
  if (holdsCardNumber(rewritten) || !read.reads(rewritten))
    throw unusable('body', 'holds a card number that could not be replaced in place');
  return rewritten;
}

/** Cards go in the body: a card number in the path, the query or a header value is refused before anything is read. */
function refuseCardsOutsideBody(target: InboundTarget, req: IncomingMessage, credentials: Array<string | null>): void {
  const refused = (location: 'path' | 'query' | 'header', name: string) =>
    new ProblemException(InboundErrors.cardDataUnusable, `The ${location} holds a card number: cards go in the body.`, [
      { location, name, message: 'holds a card number' },
    ]);
  if (holdsCardNumber(target.path)) throw refused('path', 'path');
  if (holdsCardNumber(target.query)) throw refused('query', 'query');
  // The caller's credential (a secret may be all digits) is checked, never sent on.
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    if (!credentials.includes(name) && holdsCardNumber(req.rawHeaders[i + 1])) throw refused('header', name);
  }
}
