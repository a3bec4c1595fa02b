/**
 * The first half of a forward (the seam for the queued path is described in forward-plan.ts):
 *
 *   ForwardPlanner.plan(input: ForwardPlanInput, record?: ForwardRecord): Promise<ForwardPlan>
 *     Throws the same ProblemException the synchronous path answers (4xx; 503 when the database is
 *     away), so a queued request is refused when it is asked for. Opens no card.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { ProblemException } from '../../../platform/problem/problem';
import { ForwardAuthenticationsService } from '../../forwarding-setup/authentication-methods/forward-authentications.service';
import {
  EnabledConfig,
  VaultForwardConfigsService,
} from '../../forwarding-setup/configs/vault-forward-configs.service';
import {
  PlaceholderError,
  PlaceholderScan,
  PlaceholderSourceShape,
  PlaceholderUse,
  scanText,
} from '../../vault/placeholders/placeholders';
import { checkOutbound } from '../sending/outbound-policy';
import { recordedUrl } from '../../../platform/logging/redaction';
import { hostKey, hostsEnable } from '../../forwarding-setup/targets/http-methods';
import type { ForwardRecord } from '../records/forward-record';
import { ForwardSpec, HEADER_PREFIX, parseForwardHeaders, URL_HEADER } from './forward-headers';
import { ForwardingErrors } from './forwarding.errors';
import { FORWARD_PLAN_VERSION, ForwardPlan, outgoingContentType } from './forward-plan';
import { bodyEncodingFor, escapeStyleFor } from '../../vault/placeholders/placeholder-encodings';
import { PlaceholderSources } from './placeholder-sources';
import { templateSecrets } from './template-secrets';
import { DisclosureBudgetsService } from '../budgets/disclosure-budgets.service';

/** Caller headers that describe the body or the wanted answer; everything else stays here. */
const PASSED_THROUGH = ['content-type', 'accept', 'accept-language'];

/**
 * What a header value can carry (HTTP/1.1 as undici sends it): tab, visible ASCII, and Latin-1's
 * upper half without its C1 controls (0x80–0x9f): undici would send those, but they are control
 * characters a target may act on (NEL as a line break), as the docs promise. A character class, so
 * one linear pass.
 */
const UNSENDABLE_HEADER_CHAR = /[^\t\x20-\x7e\xa0-\xff]/;

export interface ForwardPlanInput {
  merchantAccountId: string;
  /** The API key the caller authenticated with: the record and the ledger name it. */
  apiKeyId: string | null;
  /** Id of this forward and of its record (x-vault-forward-request-id). */
  requestId: string;
  headers: IncomingHttpHeaders;
  /** Node's raw header list, to detect repeated forwarding headers. */
  rawHeaders: string[];
  body: Buffer | undefined;
}

/**
 * The first half of POST /vault-forward, shared by the synchronous and the queued path: reads the
 * forwarding headers and checks everything that can be checked without card values, so a queued
 * forward is refused (4xx) when it is asked for, not when a worker picks it up:
 *
 *   headers → transport (https, IP literals public) → config match → authentication methods usable
 *   for this merchant and config → placeholder syntax and positions → every referenced card exists (not
 *   opened; PlaceholderSources) → the caller's passed-through headers sendable.
 *
 * `plan(input, record?)` fills `record` (method, target, ids, config id) as it learns them, so a
 * forward refused midway is recorded with what was known. What still depends on
 * card values (a filled header value a header cannot carry, the filled body's size) is the
 * executor's to check. Nothing here opens a card.
 */
@Injectable()
export class ForwardPlanner {
  constructor(
    private readonly configs: VaultForwardConfigsService,
    private readonly sources: PlaceholderSources,
    private readonly authentications: ForwardAuthenticationsService,
    private readonly budgets: DisclosureBudgetsService,
    @Inject(APP_CONFIG) private readonly appConfig: AppConfig,
  ) {}

  async plan(input: ForwardPlanInput, record?: ForwardRecord): Promise<ForwardPlan> {
    const spec = parseForwardHeaders(input.headers, input.rawHeaders);
    if (record) {
      record.method = spec.method;
      record.targetUrl = recordedUrl(spec.url);
      record.paymentMethodIds = spec.paymentMethodIds;
      record.checkoutSessionId = spec.checkoutSessionId;
      record.authenticationIds = spec.authenticationIds;
      record.merchantInitiated = spec.merchantInitiated;
    }
    const trusted = checkTransport(this.appConfig.forwardInsecureHosts, spec.url);
    const body = input.body && input.body.length > 0 ? input.body : undefined;
    const callerType = input.headers['content-type'];
    const bodyEncoding = bodyEncodingFor(
      outgoingContentType(spec.headers, typeof callerType === 'string' ? [['content-type', callerType]] : []),
    );
    const source = this.sources.for(spec);
    // What planning reads starts at once (decision 0157): the configs, the budgets and the cards, each from its
    // cache or one query; the refusals still come in the order below (the config's first), each where it did.
    const scanned = attempt(() => scanAll(spec, body, escapeStyleFor(bodyEncoding), source.shape));
    this.budgets.prefetch(input.merchantAccountId);
    const checked =
      'value' in scanned ? attempt(() => source.check(input.merchantAccountId, scanned.value.uses)) : null;
    const config = enablingConfig(await this.configs.enabledConfigs(input.merchantAccountId), spec.url, spec.method);
    const configId = config.id;
    if (record) record.configId = configId;
    // Each id must be a usable method of this merchant and config, before any card is looked at.
    const methods =
      spec.authenticationIds.length > 0
        ? await this.authentications.forForward(input.merchantAccountId, configId, spec.authenticationIds)
        : [];
    if ('error' in scanned) throw scanned.error;
    const scans = scanned.value;
    // Only the placeholders the config may fill (decision 0134): 400 naming the first other, before any card.
    const templates = { merchantAccountId: input.merchantAccountId, headerTemplates: spec.headers };
    await this.budgets.checkPlaceholders(templates, configId, scans);
    // Every SECRET.name must be held by one listed template-secrets method (checked again at send time).
    templateSecrets(methods, scans, spec.headers);
    if (checked && 'error' in checked) throw checked.error;
    await checked?.value;
    // From what check() read: the budgets count these at send time (decision 0142).
    const fingerprints = source.discloses ? await source.fingerprints(input.merchantAccountId) : [];

    const passedHeaders: Array<[string, string]> = [];
    for (const name of PASSED_THROUGH) {
      const value = input.headers[name];
      if (typeof value === 'string') passedHeaders.push([name, sendableHeader(name, value, name)]);
    }
    return {
      version: FORWARD_PLAN_VERSION,
      id: input.requestId,
      merchantAccountId: input.merchantAccountId,
      apiKeyId: input.apiKeyId,
      configId,
      url: spec.url,
      method: spec.method,
      timeoutMs: spec.timeoutMs,
      trusted,
      paymentMethodIds: spec.paymentMethodIds,
      checkoutSessionId: spec.checkoutSessionId,
      authenticationIds: spec.authenticationIds,
      merchantInitiated: spec.merchantInitiated,
      passedHeaders,
      headerTemplates: spec.headers,
      body,
      bodyEncoding,
      cryptograms: spec.cryptograms,
      local: { scans, methods, fingerprints, policy: config },
    };
  }

  /**
   * A callback URL of a queued forward, under a target's rules: https unless the operator
   * lists the host, an IP literal must be public, and one of the merchant's enabled configs must list
   * the host (for any method). Names `header` in every problem.
   */
  async checkCallbackUrl(merchantAccountId: string, url: URL, header: string): Promise<void> {
    checkTransport(this.appConfig.forwardInsecureHosts, url, header);
    const key = hostKey(url);
    const configs = await this.configs.enabledConfigs(merchantAccountId);
    if (configs.some((c) => hostsEnable(c.hosts, url))) return;
    throw new ProblemException(
      ForwardingErrors.endpointNotEnabled,
      `${key} is not enabled for this merchant account.`,
      [{ location: 'header', name: header, message: 'host not enabled' }],
    );
  }
}

/** The outbound policy for a target (checkOutbound): whether it is trusted. Names `header` in every problem. */
export function checkTransport(
  insecureHosts: AppConfig['forwardInsecureHosts'],
  url: URL,
  header = URL_HEADER,
): boolean {
  return checkOutbound(insecureHosts, url, 'The target', { location: 'header', name: header });
}

/**
 * The config that enables `method` on the URL's host: `preferred` when it still does (a queued plan's
 * own config, to which its authentication methods belong), else the first in the merchant's order;
 * none → 403 endpoint-not-enabled, the same problem at planning and at send time.
 */
export function enablingConfig(
  configs: readonly EnabledConfig[],
  url: URL,
  method: string,
  preferred?: string,
): EnabledConfig {
  const key = hostKey(url);
  const enables = (c: EnabledConfig) => hostsEnable(c.hosts, url) && c.methods.has(method);
  const match = configs.find((c) => c.id === preferred && enables(c)) ?? configs.find(enables);
  if (match) return match;
  const hostOnly = configs.some((c) => hostsEnable(c.hosts, url));
  throw new ProblemException(
    ForwardingErrors.endpointNotEnabled,
    hostOnly ? `${key} is enabled, but not for ${method}.` : `${key} is not enabled for this merchant account.`,
    [
      {
        location: 'header',
        name: URL_HEADER,
        message: hostOnly ? `method ${method} not enabled for this host` : 'host not enabled',
      },
    ],
  );
}

/**
 * `run()`'s result or what it threw, to be thrown later in its turn. A promise it returns is kept from being an
 * unhandled rejection meanwhile: whoever awaits it still sees the rejection.
 */
function attempt<T>(run: () => T): { value: T } | { error: unknown } {
  try {
    const value = run();
    if (value instanceof Promise) value.catch(() => undefined);
    return { value };
  } catch (error) {
    return { error };
  }
}

/**
 * Placeholders are found before anything is decrypted, in one pass whose result the fill reuses.
 * The body is read as latin1 (a byte-for-byte mapping), so it goes out unchanged apart from the
 * filled values.
 */
function scanAll(spec: ForwardSpec, body: Buffer | undefined, style: 'json' | 'raw', shape: PlaceholderSourceShape) {
  const count = shape;
  const uses: PlaceholderUse[] = [];
  let bodyScan: PlaceholderScan | undefined;
  try {
    if (body) {
      bodyScan = scanText(body.toString('latin1'), count, style);
      uses.push(...bodyScan.uses);
    }
  } catch (error) {
    throw placeholderProblem(error, 'body', 'body');
  }
  const headers: PlaceholderScan[] = [];
  for (const [name, value] of spec.headers) {
    try {
      const scan = scanText(value, count);
      uses.push(...scan.uses);
      headers.push(scan);
    } catch (error) {
      throw placeholderProblem(error, 'header', `${HEADER_PREFIX}${name}`);
    }
  }
  return { body: bodyScan, headers, uses };
}

function placeholderProblem(error: unknown, location: 'body' | 'header', name: string): unknown {
  if (!(error instanceof PlaceholderError)) return error;
  return new ProblemException(ForwardingErrors.invalidPlaceholder, error.message, [
    { location, name, message: error.message },
  ]);
}

/** `fill()`, with a PlaceholderError (a value a function or the encoding cannot take) as a 400 naming `name`. */
export function placeholderFailure<T>(fill: () => T, location: 'body' | 'header', name: string): T {
  try {
    return fill();
  } catch (error) {
    throw placeholderProblem(error, location, name);
  }
}

/**
 * A header value as the target will get it, or a 400 naming the header: undici refuses to send a
 * line break, a control character or anything outside Latin-1 (a cardholder name in Chinese, say),
 * and that must not surface as "downstream unreachable" after the fact.
 */
export function sendableHeader(target: string, value: string, header: string): string {
  if (!UNSENDABLE_HEADER_CHAR.test(value)) return value;
  const lineBreak = /[\r\n\0]/.test(value);
  const message = lineBreak
    ? 'filled value contains a line break'
    : 'filled value has a character a header cannot carry (a control character, or one outside Latin-1)';
  throw new ProblemException(
    ForwardingErrors.invalidHeader,
    lineBreak
      ? `${header} would contain a line break once filled.`
      : `${header} would contain a character that cannot be sent in the ${target} header once filled; nothing was sent.`,
    [{ location: 'header', name: header, message }],
  );
}
