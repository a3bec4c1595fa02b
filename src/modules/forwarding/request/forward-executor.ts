/**
 * The second half of a forward: a ForwardPlan (forward-plan.ts, which describes the whole seam) in,
 * the downstream's answer out. Used by ForwardingService (synchronous, right after planning) and by
 * the queued worker (a plan read back from its job).
 *
 *   execute(plan, { lease?, record?, recordId?, started? }): Promise<DownstreamResponse>
 *     A plan from another process (a queued job) is checked again first: transport, and a config
 *     enabling its host and method (read fresh). Resolves the card values, fills, looks the
 *     authentication methods up again (unless the plan carries them from planning in this process)
 *     and applies them, makes the record durable when the plan lists cards, sends, puts the answer
 *     through its config's response rules (forward-responses/), and records the outcome (one record
 *     per call; a streamed answer is recorded when the stream ends), with the redacted request and
 *     answer of decision 0104 only when the config asks (`record_bodies`, read at send time: decision
 *     0138). Throws a ProblemException (or, for a database outage, the driver's error) after recording it.
 *   isRetryable, reachedDownstream   what a failure says about trying again (forward-failures.ts)
 */
import { performance } from 'node:perf_hooks';
import { finished, Readable } from 'node:stream';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { ProblemException } from '../../../platform/problem/problem';
import { toProblem } from '../../../platform/problem/problem.filter';
import { Metrics } from '../../../platform/metrics/metrics.service';
import { CLOCK, Clock } from '../../../platform/time/clock';
import {
  ForwardAuthenticationsService,
  UsableAuthenticationMethod,
} from '../../forwarding-setup/authentication-methods/forward-authentications.service';
import { VaultForwardConfigsService } from '../../forwarding-setup/configs/vault-forward-configs.service';
import { ResponseFilter } from '../answers/response-filter';
import { MleAnswers } from '../answers/mle-answers';
import {
  filledByteLength,
  fillBytes,
  fillScan,
  filledValue,
  filledValues,
  PlaceholderMatch,
  PlaceholderUse,
  TemplateSecrets,
} from '../../vault/placeholders/placeholders';
import { DownstreamClient, DownstreamResponse } from '../sending/downstream-client';
import { markedAfterAnswer } from './forward-failures';

export { isRetryable, reachedDownstream } from './forward-failures';
import type { ForwardRecord } from '../records/forward-record';
import { ForwardRecordsService } from '../records/forward-records.service';
import { HEADER_PREFIX } from './forward-headers';
import { recordedUrl } from '../../../platform/logging/redaction';
import { ForwardingErrors } from './forwarding.errors';
import { ForwardPlan, PlanLocal, PlanScans, scanPlan } from './forward-plan';
import { checkTransport, enablingConfig, placeholderFailure, sendableHeader } from './forward-planner';
import type { InflightLease } from '../sending/inflight-bytes';
import { AuthenticationSteps } from '../sending/authentication-steps';
import { PlaceholderSource, PlaceholderSources } from './placeholder-sources';
import { templateSecrets } from './template-secrets';
import { DisclosureBudgetsService } from '../budgets/disclosure-budgets.service';
import type { OutboundRequest } from '../sending/outbound-request';
import { redactedBytes, redactedText } from '../../vault/placeholders/placeholder-redaction';
import {
  BodyTap,
  CAPTURED_BYTES,
  isWithheld,
  recordedHeaders,
  setByMethod,
  tapped,
} from '../record-bodies/body-capture';
import { recordedBody } from '../record-bodies/decoded-bodies';

interface ExecuteOptions {
  /** Counts the filled body among the bytes in flight (the HTTP handler's lease; a worker may have none). */
  lease?: InflightLease;
  /** The record planning started (the synchronous path); otherwise one is made from the plan. */
  record?: ForwardRecord;
  /** The id of the record made from the plan (e.g. one per attempt of a queued job); default plan.id. */
  recordId?: string;
  /** performance.now() when the forward began, for the record's duration; default now. */
  started?: number;
  /**
   * A failure the caller puts off without counting it as a try (a queued forward whose cards the key
   * store could not open): if nothing was disclosed, it leaves no record and no forward in the metrics.
   */
  putOff?: (error: unknown) => boolean;
}

/** What the ledger says a forward filled: each placeholder once, as NAME_POSITION, in the order first used. */
function filledFields(uses: readonly PlaceholderUse[]): string[] {
  return [...new Set(uses.map((use) => `${use.name}_${use.position}`))];
}

/** A record with what the plan knows and no outcome yet. */
function recordForPlan(plan: ForwardPlan, id = plan.id): ForwardRecord {
  return {
    id,
    merchantAccountId: plan.merchantAccountId,
    apiKeyId: plan.apiKeyId,
    configId: plan.configId,
    method: plan.method,
    targetUrl: recordedUrl(plan.url),
    status: null,
    durationMs: 0,
    paymentMethodIds: [...plan.paymentMethodIds],
    checkoutSessionId: plan.checkoutSessionId,
    authenticationIds: [...plan.authenticationIds],
    merchantInitiated: plan.merchantInitiated,
    errorType: null,
  };
}

/** The downstream's answer, and the values the request carried that nothing kept of the answer may hold. */
export interface ExecutedResponse extends DownstreamResponse {
  /** Every value the service filled, and what an authentication method added (see keptText). */
  withheld: readonly string[];
}

/** The fill's result, with the redacted form of what it filled when the record keeps bodies (decision 0104). */
interface Filled {
  headers: Record<string, string>;
  body: Buffer | undefined;
  /** Every filled value, what the record shows in placeholder form: looked for in the answer (a downstream may echo). */
  withheld: string[];
  redacted?: {
    headers: Map<string, string>;
    body: { head: Buffer; total: number } | null;
  };
}

@Injectable()
export class ForwardExecutor {
  private readonly logger = new Logger('Forwarding');
  /** Per record: the values its request carried and its record withholds (never on the record, so never stored). */
  private readonly withheld = new WeakMap<ForwardRecord, string[]>();
  /** MEASURE_WITHOUT (decision 0157): what a benchmark's process leaves out of every forward; never in production. */
  private readonly without: AppConfig['measureWithout'];

  constructor(
    private readonly sources: PlaceholderSources,
    private readonly downstream: DownstreamClient,
    private readonly records: ForwardRecordsService,
    private readonly authentications: ForwardAuthenticationsService,
    private readonly configs: VaultForwardConfigsService,
    private readonly steps: AuthenticationSteps,
    private readonly metrics: Metrics,
    private readonly responses: ResponseFilter,
    private readonly mle: MleAnswers,
    private readonly budgets: DisclosureBudgetsService,
    @Inject(APP_CONFIG) private readonly appConfig: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.without = appConfig.measureWithout ?? new Set();
    if (this.without.size > 0)
      this.logger.warn({
        msg: `MEASURE_WITHOUT=${[...this.without].join(',')}: forwards leave these guarantees out (for measurement only)`,
      });
  }

  async execute(plan: ForwardPlan, options: ExecuteOptions = {}): Promise<ExecutedResponse> {
    const started = options.started ?? performance.now();
    const record = options.record ?? recordForPlan(plan, options.recordId);
    let response: DownstreamResponse;
    try {
      response = await this.send(plan, options.lease, record);
    } catch (error) {
      // The disclosure log: a try given back before any card was released discloses nothing (decision 0088).
      if (!(options.putOff?.(error) && !record.disclosed)) this.recordFailure(record, started, error);
      throw error;
    }
    record.status = response.status;
    const withheld = this.withheld.get(record) ?? [];
    // A compressed answer is recorded decoded, or not at all (decision 0137); recordedBody never rejects.
    const recorded = (head: Buffer, total: number) =>
      recordedBody(head, total, response.headers, { withheld, noun: 'answer' }).then(answerOf);
    if (!(response.body instanceof Readable)) {
      if (record.bodies) Object.assign(record.bodies, await recorded(response.body, response.body.length));
      this.finish(record, started);
      return { ...response, withheld };
    }
    // The answer after the rules, as the caller (or the worker that seals it) reads it: its first bytes.
    const tap = record.bodies ? new BodyTap() : null;
    const body = tap ? tapped(response.body, tap) : response.body;
    // A streamed answer is recorded once it has gone through, or with what cut it off.
    finished(body, (error) => {
      if (error) record.errorType = error instanceof ProblemException ? error.definition.code : 'client-disconnected';
      if (!tap || !record.bodies) return this.finish(record, started);
      const { head, total } = tap.captured();
      void recorded(head, total).then((answer) => {
        Object.assign(record.bodies!, answer);
        this.finish(record, started);
      });
    });
    return { ...response, body, withheld };
  }

  /** Records a forward that failed with `error` (also for a failure while planning). */
  recordFailure(record: ForwardRecord, started: number, error: unknown): void {
    const problem = toProblem(error);
    record.status = problem.status;
    record.errorType = problem.definition.code;
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
    // A plan from elsewhere (a queued job) is judged when it is sent, as a synchronous forward would be:
    // its config, hosts and methods may have changed or gone since it was planned.
    const target = plan.local
      ? { trusted: plan.trusted, configId: plan.configId, policy: plan.local.policy }
      : await this.target(plan);
    record.configId = target.configId;
    const methods =
      plan.local?.methods ??
      (plan.authenticationIds.length > 0
        ? await this.authentications.forForward(plan.merchantAccountId, target.configId, plan.authenticationIds)
        : []);
    const source = this.sources.for(plan);
    // A deserialised plan's scans; planning checked the same templates, so a failure here is the plan's.
    const scans = plan.local?.scans ?? placeholderFailure(() => scanPlan(plan, source.shape), 'body', 'body');
    // A queued plan's config may have narrowed what it may fill since planning (decision 0134).
    if (!plan.local) await this.budgets.checkPlaceholders(plan, target.configId, scans);
    let response: DownstreamResponse;
    try {
      response = await this.fillAndSend(plan, source, scans, methods, lease, record, target);
    } catch (error) {
      // No answer: what the source holds (a session's security code) may be used by a retry.
      await source.abandoned(plan.merchantAccountId).catch((release: unknown) => this.sourceFailed(plan, release));
      throw error;
    }
    // A checkout session's security code goes once the target has decided (PlaceholderSource.answered).
    // Its failure (database away) must not turn a delivered answer into an error: expiry erases it anyway.
    await source
      .answered(plan.merchantAccountId, scans.uses, response.status)
      .catch((error: unknown) => this.sourceFailed(plan, error));
    // Before the answer is returned or sealed: an encrypted answer opened (decision 0103), then what the
    // config's rules take out never leaves (decision 0097).
    try {
      const opened = await this.mle.open(methods, response);
      return await this.responses.filter(plan.merchantAccountId, target.policy, opened);
    } catch (error) {
      // The request was sent: a queued job must not take this for a failure before the send.
      markedAfterAnswer(error);
      throw error;
    }
  }

  private sourceFailed(plan: ForwardPlan, error: unknown): void {
    this.logger.warn({
      msg: 'could not erase or release a checkout session security code; its lease and the session expiry bound it',
      forward: plan.id,
      error: (error as Error).message,
    });
  }

  private async fillAndSend(
    plan: ForwardPlan,
    source: PlaceholderSource,
    scans: PlanScans,
    methods: UsableAuthenticationMethod[],
    lease: InflightLease | undefined,
    record: ForwardRecord,
    target: { trusted: boolean; policy: PlanLocal['policy'] },
  ): Promise<DownstreamResponse> {
    // Read from the methods as they are now (the plan holds their ids only); never logged.
    const secrets = templateSecrets(methods, scans, plan.headerTemplates);
    // What the ledger names as filled, a refusal's entry included.
    record.filledFields = filledFields(scans.uses);
    // The record keeps the redacted request and answer only when the config asks (decision 0138).
    const keepDays = target.policy.recordBodiesDays;
    // The disclosure budgets (decisions 0134, 0142) count the forward while its cards are opened and filled in
    // (decision 0157); a source that reaches out for its values waits for the count. Over a budget: 429, nothing
    // leaves. The count's refusal comes first, as when it was made before the fill.
    const counting =
      source.discloses && !this.without.has('budgets')
        ? this.budgets.take({ ...plan, id: record.id, configId: record.configId ?? plan.configId, cards: source })
        : undefined;
    if (counting && !source.valuesOnlyRead?.(scans.uses)) await counting;
    const [counted, filling] = await Promise.allSettled([
      counting,
      this.fill(plan, source, scans, secrets, lease, keepDays > 0),
    ]);
    if (counted.status === 'rejected') throw counted.reason;
    if (filling.status === 'rejected') throw filling.reason;
    const filled = filling.value;
    let request: OutboundRequest = {
      url: plan.url,
      method: plan.method,
      timeoutMs: plan.timeoutMs,
      trusted: target.trusted,
      identity: null,
      headers: filled.headers,
      body: filled.body,
    };
    // After the placeholders, in the caller's order: what a method signs or encrypts is what is sent.
    if (methods.length > 0)
      request = await this.steps.apply(request, methods, this.clock.epochMs(), target.policy.hosts);
    // Headers a method set or changed (a signature), and the query string, which the record leaves out too.
    const withheld = [...filled.withheld, plan.url.search.slice(1)];
    for (const [name, value] of Object.entries(request.headers))
      if (setByMethod(name, value, filled.headers)) withheld.push(value);
    this.withheld.set(record, withheld);
    if (filled.redacted) {
      // What was sent, with placeholder text for every filled value (decision 0104); a JWE step's ciphertext
      // is not kept: the record holds the redacted body it encrypted.
      // A body the caller compressed (content-encoding templated) is recorded decoded, or not at all (decision 0137).
      const { head, total } = filled.redacted.body ?? {};
      const body = head ? await recordedBody(head, total!, request.headers, { noun: 'request body' }) : null;
      record.bodies = {
        retentionDays: keepDays,
        requestHeaders: recordedHeaders(request.headers, filled.headers, filled.redacted.headers),
        requestBody: body?.text ?? null,
        requestBodyTruncated: body?.truncated ?? false,
      };
    }
    // Card data leaves only once its disclosure is on record: committed, or spooled and fsync'd (or 503, nothing sent).
    // The commit waits for the count and the fill: it writes the ledger's disclosure entry, which a forward refused
    // before its send must not have (decisions 0133, 0157). Measured without it, the outcome carries the disclosure.
    if (source.discloses && !this.without.has('durable-record')) await this.records.disclose(record);
    else if (source.discloses) record.disclosed = true;
    const response = await this.downstream.send(request);
    this.steps.answered(request, response.status); // a 401 drops an access token sent (no resend: decision 0123)
    return response;
  }

  /**
   * The send-time checks of a plan made earlier: transport under this process's FORWARD_INSECURE_HOSTS,
   * and a config enabling the host and method now. The configs are read from the table, not the cache:
   * a deleted config must stop a job at once in every worker, whether or not its change notice arrived
   * (one indexed prepared statement per attempt, next to the claim, disclosure and end statements an
   * attempt runs anyway).
   */
  private async target(
    plan: ForwardPlan,
  ): Promise<{ trusted: boolean; configId: string; policy: PlanLocal['policy'] }> {
    const trusted = checkTransport(this.appConfig.forwardInsecureHosts, plan.url);
    const configs = await this.configs.enabledConfigs(plan.merchantAccountId, { fresh: true });
    const config = enablingConfig(configs, plan.url, plan.method, plan.configId);
    return { trusted, configId: config.id, policy: config };
  }

  /**
   * Only what the request uses is computed, and a card is decrypted only for its number or name. The
   * filled size is known before the body is built.
   */
  private async fill(
    plan: ForwardPlan,
    source: PlaceholderSource,
    scans: PlanScans,
    secrets: TemplateSecrets,
    lease: InflightLease | undefined,
    recordBodies: boolean,
  ): Promise<Filled> {
    const values = await source.values(plan.merchantAccountId, scans.uses);

    const headers: Record<string, string> = {};
    for (const [name, value] of plan.passedHeaders) headers[name] = value;
    const withheld: string[] = [];
    const redacted = recordBodies ? { headers: new Map<string, string>(), body: null } : undefined;
    plan.headerTemplates.forEach(([name], index) => {
      const header = `${HEADER_PREFIX}${name}`;
      const fill = (m: PlaceholderMatch) => filledValue(m, values, 'none', secrets);
      // Header values are never escaped: sendableHeader refuses what a header cannot carry.
      const filled = placeholderFailure(() => fillScan(scans.headers[index], fill), 'header', header);
      headers[name] = sendableHeader(name, filled, header);
      const parts = scans.headers[index].matches.filter((m) => !m.escaped && !m.kind);
      // The whole value too (a credential typed around a placeholder), unless all it fills is a short card detail.
      if (filled.length >= 8 || parts.some((m) => isWithheld(m.key, 0))) withheld.push(filled);
      withheld.push(...parts.map(fill).filter((value, k) => isWithheld(parts[k].key, value.length)));
      // The same branches as the fill (an if's condition is filled again: headers are short, ifs rare).
      redacted?.headers.set(
        name,
        redactedText(scans.headers[index], (m) => fill(m) !== ''),
      );
    });

    const body = plan.body;
    const bodyScan = scans.body;
    if (!body || !bodyScan) return { headers, body: undefined, withheld, redacted };
    if (bodyScan.matches.length === 0) {
      return {
        headers,
        body,
        withheld,
        redacted: redacted && { ...redacted, body: redactedBytes(body, bodyScan, () => false, CAPTURED_BYTES) },
      };
    }
    // Each placeholder is filled once, however often it appears: UTF-8, escaped for the body's content type.
    const limit = this.appConfig.forwardMaxFilledBodyBytes;
    // Each value replaces a placeholder of the body: past the limit plus the body, the fill is over the limit.
    const { encoded, total: distinct } = placeholderFailure(
      () => filledValues(bodyScan, values, plan.bodyEncoding, secrets, limit + body.length),
      'body',
      'body',
    );
    const cutShort = distinct > limit + body.length;
    const length = cutShort ? distinct - body.length : filledByteLength(bodyScan, encoded);
    if (length > limit) {
      throw new ProblemException(
        ForwardingErrors.filledBodyTooLarge,
        `With its placeholders filled the body would be ${cutShort ? 'over ' : ''}${length} bytes, more than the ${limit} bytes ` +
          `FORWARD_MAX_FILLED_BODY_BYTES allows; nothing was sent.`,
        [{ location: 'body', name: 'body', message: `filled body over ${limit} bytes` }],
      );
    }
    lease?.take(length, { location: 'body', name: 'body', message: 'no room for the filled body now' });
    const filledBody = fillBytes(body, bodyScan, encoded, length);
    for (const [key, value] of encoded) if (isWithheld(key, value.length)) withheld.push(value.toString('utf8'));
    if (!redacted) return { headers, body: filledBody, withheld };
    // One more walk over the template, never a search of the filled body: placeholder text where values went.
    const truthy = (m: PlaceholderMatch) => (encoded.get(m.key)?.length ?? 0) > 0;
    return {
      headers,
      body: filledBody,
      withheld,
      redacted: { ...redacted, body: redactedBytes(body, bodyScan, truthy, CAPTURED_BYTES) },
    };
  }
}

/** The answer's part of a record's bodies. */
function answerOf(answer: { text: string; truncated: boolean }) {
  return { responseBody: answer.text, responseBodyTruncated: answer.truncated };
}
