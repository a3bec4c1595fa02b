/**
 * The second half of a forward: a ForwardPlan (forward-plan.ts, which describes the whole seam) in,
 * the downstream's answer out. Used by ForwardingService (synchronous, right after planning) and by
 * the queued worker (a plan read back from its job).
 *
 *   execute(plan, { lease?, record?, recordId?, started? }): Promise<DownstreamResponse>
 *     Resolves the card values, fills, looks the authentication methods up again (unless the plan
 *     carries them from planning in this process) and applies them, makes the record durable when
 *     the plan lists cards, sends, and records the outcome (one record per call; a streamed answer
 *     is recorded when the stream ends). Throws a ProblemException (or, for a database outage, the
 *     driver's error) after recording it.
 *   isRetryable(error): boolean      whether trying the same plan again later may succeed
 *   reachedDownstream(error): boolean  false when nothing of the request can have reached the target
 */
import { performance } from 'node:perf_hooks';
import { finished, Readable } from 'node:stream';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { CommonErrors } from '../common/problem/common.errors';
import { ProblemException } from '../common/problem/problem';
import { isDatabaseUnavailable } from '../database/errors';
import { Metrics } from '../metrics/metrics.service';
import { ForwardAuthenticationsService } from '../forward-authentications/forward-authentications.service';
import { filledByteLength, fillBytes, fillScan, jsonStringContent } from '../vault/placeholders';
import { DownstreamClient, DownstreamProblem, DownstreamResponse } from './downstream-client';
import { ForwardRecord, ForwardRecordsService } from './forward-records.service';
import { HEADER_PREFIX } from './forward-headers';
import { ForwardingErrors } from './forwarding.errors';
import { ForwardPlan, PlanScans, scanPlan } from './forward-plan';
import { placeholderProblem, sendableHeader } from './forward-planner';
import type { InflightLease } from './inflight-bytes';
import { AuthenticationSteps } from './outbound/authentication-steps';
import { PlaceholderSource, PlaceholderSources } from './placeholder-sources';
import type { OutboundRequest } from './outbound/outbound-request';

export interface ExecuteOptions {
  /** Counts the filled body among the bytes in flight (the HTTP handler's lease; a worker may have none). */
  lease?: InflightLease;
  /** The record planning started (the synchronous path); otherwise one is made from the plan. */
  record?: ForwardRecord;
  /** The id of the record made from the plan (e.g. one per attempt of a queued job); default plan.id. */
  recordId?: string;
  /** performance.now() when the forward began, for the record's duration; default now. */
  started?: number;
}

/** Codes whose cause may pass: the target unreachable or slow, this service briefly without room or database. */
const RETRYABLE_CODES = new Set([
  ForwardingErrors.downstreamUnreachable.code,
  ForwardingErrors.downstreamTimeout.code,
  CommonErrors.serviceUnavailable.code,
]);

/**
 * Whether the same plan may succeed later: network failures and timeouts of the downstream (502
 * downstream-unreachable, 504 downstream-timeout), and any 503 of this service (database or spool
 * unavailable, capacity). Every other problem (4xx: a card or method deleted since planning, a
 * filled value a header cannot carry, …) would fail again.
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof ProblemException) return RETRYABLE_CODES.has(error.definition.code) || error.status === 503;
  return isDatabaseUnavailable(error);
}

/**
 * False when nothing of the request can have reached the downstream: it failed before the send
 * (any problem that is not a DownstreamProblem), or the connection was never made.
 */
export function reachedDownstream(error: unknown): boolean {
  return error instanceof DownstreamProblem && error.reachedDownstream;
}

/** A record with what the plan knows and no outcome yet. */
export function recordForPlan(plan: ForwardPlan, id = plan.id): ForwardRecord {
  return {
    id,
    merchantAccountId: plan.merchantAccountId,
    configId: plan.configId,
    method: plan.method,
    targetUrl: `${plan.url.origin}${plan.url.pathname}`,
    status: null,
    durationMs: 0,
    paymentMethodIds: [...plan.paymentMethodIds],
    checkoutSessionId: plan.checkoutSessionId,
    authenticationIds: [...plan.authenticationIds],
    errorType: null,
  };
}

@Injectable()
export class ForwardExecutor {
  private readonly logger = new Logger('Forwarding');

  constructor(
    private readonly sources: PlaceholderSources,
    private readonly downstream: DownstreamClient,
    private readonly records: ForwardRecordsService,
    private readonly authentications: ForwardAuthenticationsService,
    private readonly steps: AuthenticationSteps,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly appConfig: AppConfig,
  ) {}

  async execute(plan: ForwardPlan, options: ExecuteOptions = {}): Promise<DownstreamResponse> {
    const started = options.started ?? performance.now();
    const record = options.record ?? recordForPlan(plan, options.recordId);
    let response: DownstreamResponse;
    try {
      response = await this.send(plan, options.lease, record);
    } catch (error) {
      this.recordFailure(record, started, error);
      throw error;
    }
    record.status = response.status;
    if (!(response.body instanceof Readable)) {
      this.finish(record, started);
      return response;
    }
    // A streamed answer is recorded once it has gone through, or with what cut it off.
    finished(response.body, (error) => {
      if (error) record.errorType = error instanceof ProblemException ? error.definition.code : 'client-disconnected';
      this.finish(record, started);
    });
    return response;
  }

  /** Records a forward that failed with `error` (also for a failure while planning). */
  recordFailure(record: ForwardRecord, started: number, error: unknown): void {
    if (error instanceof ProblemException) {
      record.status = error.status;
      record.errorType = error.definition.code;
    } else {
      record.status = 500;
      record.errorType = 'internal-error';
    }
    this.finish(record, started);
  }

  private finish(record: ForwardRecord, started: number): void {
    record.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    this.records.write(record);
    this.metrics.forwardFinished(record.status, record.errorType, record.durationMs / 1000);
  }

  private async send(
    plan: ForwardPlan,
    lease: InflightLease | undefined,
    record: ForwardRecord,
  ): Promise<DownstreamResponse> {
    // A plan from elsewhere (a queued job): its methods may have changed or gone since it was planned.
    const methods =
      plan.local?.methods ??
      (plan.authenticationIds.length > 0
        ? await this.authentications.forForward(plan.merchantAccountId, plan.configId, plan.authenticationIds)
        : []);
    const source = this.sources.for(plan);
    const scans = plan.local?.scans ?? rescan(plan, source);
    const filled = await this.fill(plan, source, scans, lease);
    let request: OutboundRequest = {
      url: plan.url,
      method: plan.method,
      timeoutMs: plan.timeoutMs,
      trusted: plan.trusted,
      identity: null,
      ...filled,
    };
    // After the placeholders, in the caller's order: what a method signs or encrypts is what is sent.
    if (methods.length > 0) request = await this.steps.apply(request, methods);
    // Card data leaves only once its disclosure is on record: committed, or spooled and fsync'd (or 503, nothing sent).
    if (source.discloses) await this.records.disclose(record);
    const response = await this.downstream.send(request);
    // A checkout session's security code goes once the target has decided (PlaceholderSource.answered).
    // Its failure (database away) must not turn a delivered answer into an error: expiry erases it anyway.
    await source.answered(plan.merchantAccountId, scans.uses, response.status).catch((error: unknown) => {
      this.logger.warn({
        msg: 'could not erase a used checkout session security code; it goes at expiry',
        forward: plan.id,
        error: (error as Error).message,
      });
    });
    return response;
  }

  /**
   * Only what the request uses is computed, and a card is decrypted only for its number or name. The
   * filled size is known before the body is built.
   */
  private async fill(
    plan: ForwardPlan,
    source: PlaceholderSource,
    scans: PlanScans,
    lease: InflightLease | undefined,
  ): Promise<{ headers: Record<string, string>; body: Buffer | undefined }> {
    const values = await source.values(plan.merchantAccountId, scans.uses);

    const headers: Record<string, string> = {};
    for (const [name, value] of plan.passedHeaders) headers[name] = value;
    plan.headerTemplates.forEach(([name], index) => {
      headers[name] = sendableHeader(
        name,
        fillScan(scans.headers[index], (token) => valueFor(values, token)),
        `${HEADER_PREFIX}${name}`,
      );
    });

    const body = plan.body;
    const bodyScan = scans.body;
    if (!body || !bodyScan) return { headers, body: undefined };
    if (bodyScan.matches.length === 0) return { headers, body };
    // Each token is encoded once, however often it appears: UTF-8, JSON-escaped in a JSON body.
    const encoded = new Map<string, Buffer>();
    for (const m of bodyScan.matches) {
      if (m.escaped || encoded.has(m.token)) continue;
      const value = valueFor(values, m.token);
      encoded.set(m.token, Buffer.from(plan.bodyStyle === 'json' ? jsonStringContent(value) : value, 'utf8'));
    }
    const length = filledByteLength(bodyScan, encoded);
    const limit = this.appConfig.forwardMaxFilledBodyBytes;
    if (length > limit) {
      throw new ProblemException(
        ForwardingErrors.filledBodyTooLarge,
        `With its placeholders filled the body would be ${length} bytes, more than the ${limit} bytes ` +
          `FORWARD_MAX_FILLED_BODY_BYTES allows; nothing was sent.`,
        [{ location: 'body', name: 'body', message: `filled body over ${limit} bytes` }],
      );
    }
    lease?.take(length, { location: 'body', name: 'body', message: 'no room for the filled body now' });
    return { headers, body: fillBytes(body, bodyScan, encoded, length) };
  }
}

/** A deserialised plan's scans; planning checked the same templates, so a failure here is the plan's. */
function rescan(plan: ForwardPlan, source: PlaceholderSource): PlanScans {
  try {
    return scanPlan(plan, source.shape);
  } catch (error) {
    throw placeholderProblem(error, 'body', 'body');
  }
}

function valueFor(values: ReadonlyMap<string, string>, token: string): string {
  const value = values.get(token);
  if (value === undefined) throw new Error(`no value resolved for ${token}`); // a bug, not user input
  return value;
}
