/**
 * A forward, planned: everything needed to send it except card values and method secrets.
 *
 * The seam between planning and sending, so that a queued forward is planned at once and sent by a worker:
 *
 *   ForwardPlanner.plan(input: ForwardPlanInput, record?: ForwardRecord): Promise<ForwardPlan>
 *   ForwardExecutor.execute(plan: ForwardPlan, options?: ExecuteOptions): Promise<DownstreamResponse>
 *   serializePlan(plan: ForwardPlan): string          JSON, body as base64; no card data, no secret
 *   deserializePlan(text: string | Buffer): ForwardPlan   throws InvalidForwardPlanError on a bad document
 *   isRetryable(error: unknown): boolean              (forward-executor.ts)
 *   reachedDownstream(error: unknown): boolean        (forward-executor.ts)
 *
 * What a plan holds can still be sensitive (literal CVVs in the body, credentials in forwarded
 * headers): whoever stores a serialised plan encrypts it. It never holds opened card values.
 */
import { FORWARD_METHODS, ForwardMethod } from '../../forwarding-setup/targets/http-methods';
import type { UsableAuthenticationMethod } from '../../forwarding-setup/authentication-methods/forward-authentications.service';
import {
  PlaceholderScan,
  PlaceholderSourceShape,
  PlaceholderUse,
  scanText,
} from '../../vault/placeholders/placeholders';
import {
  BODY_ENCODINGS,
  BodyEncoding,
  bodyEncodingFor,
  escapeStyleFor,
} from '../../vault/placeholders/placeholder-encodings';
import type { ResponsePolicy } from '../answers/response-filter';

export const FORWARD_PLAN_VERSION = 1;

export interface ForwardPlan {
  readonly version: typeof FORWARD_PLAN_VERSION;
  /** The forward's id; its record's id unless the executor is given another (one record per attempt). */
  readonly id: string;
  readonly merchantAccountId: string;
  /** The API key that asked for the forward (null in plans stored before the ledger). */
  readonly apiKeyId: string | null;
  /** The config that enables the target host and method. */
  readonly configId: string;
  readonly url: URL;
  readonly method: ForwardMethod;
  readonly timeoutMs: number;
  /** In FORWARD_INSECURE_HOSTS when planned: http allowed, no address guard. */
  readonly trusted: boolean;
  readonly paymentMethodIds: readonly string[];
  /** x-vault-forward-checkout-session: its card fills the _1 placeholders (then paymentMethodIds is empty). */
  readonly checkoutSessionId: string | null;
  readonly authenticationIds: readonly string[];
  /**
   * x-vault-forward-merchant-initiated: the merchant starts this forward, not the cardholder. Kept on
   * the plan (and the record) for the authentication steps and rules that depend on it; none does yet.
   */
  readonly merchantInitiated: boolean;
  /** The caller's content-type, accept and accept-language, already checked sendable. */
  readonly passedHeaders: ReadonlyArray<readonly [string, string]>;
  /** x-vault-forward-header-NAME as [NAME, value]; values may hold placeholders (raw style). */
  readonly headerTemplates: ReadonlyArray<readonly [string, string]>;
  /** The body as received (placeholders unfilled), or undefined when empty. */
  readonly body: Buffer | undefined;
  /**
   * How values are written into the body, from the content type the target gets (json, xml, form or
   * none); it also says how a placeholder is escaped (`\\` in JSON, `\` otherwise).
   */
  readonly bodyEncoding: BodyEncoding;
  /**
   * x-vault-forward-cryptograms by position (null: none there). In memory only, for the synchronous
   * path: never serialised (a queued forward refuses the header; its worker asks the token requestor
   * per attempt), never logged (docs/decisions/0100).
   */
  readonly cryptograms?: ReadonlyArray<string | null>;
  /**
   * What planning computed and the executor may reuse in the same process (the synchronous path):
   * the scans, the methods already looked up and the config's response policy. Never serialised; without it the executor
   * re-scans the templates and looks the methods up again.
   */
  readonly local?: PlanLocal;
}

export interface PlanScans {
  body: PlaceholderScan | undefined;
  /** One per headerTemplates entry, same order. */
  headers: PlaceholderScan[];
  /** Every unescaped placeholder, body first, then headers in order. */
  uses: PlaceholderUse[];
}

export interface PlanLocal {
  scans: PlanScans;
  methods: UsableAuthenticationMethod[];
  /** The cards' fingerprints, as the disclosure budgets count them (PlaceholderSource.fingerprints). */
  fingerprints: readonly string[];
  /**
   * The enabling config's response rules and unmatched_pan, its hosts (a token endpoint of its methods
   * must be among them) and the days its records keep bodies (0: none, decision 0138), as planning read them.
   */
  policy: ResponsePolicy & { hosts: ReadonlySet<string>; recordBodiesDays: number };
}

/** A stored plan that cannot be read back (corrupt, another version, or edited). */
class InvalidForwardPlanError extends Error {
  constructor(message: string) {
    super(`not a forward plan: ${message}`);
    this.name = 'InvalidForwardPlanError';
  }
}

/** The scans of a plan's templates; throws PlaceholderError as scanText does. */
export function scanPlan(
  plan: Pick<ForwardPlan, 'body' | 'bodyEncoding' | 'headerTemplates'>,
  shape: PlaceholderSourceShape,
): PlanScans {
  const count = shape;
  const uses: PlaceholderUse[] = [];
  let body: PlaceholderScan | undefined;
  if (plan.body) {
    body = scanText(plan.body.toString('latin1'), count, escapeStyleFor(plan.bodyEncoding));
    uses.push(...body.uses);
  }
  const headers = plan.headerTemplates.map(([, value]) => {
    const scan = scanText(value, count);
    uses.push(...scan.uses);
    return scan;
  });
  return { body, headers, uses };
}

interface SerializedPlan {
  v: number;
  id: string;
  merchant_account_id: string;
  /** Absent in plans stored before the ledger. */
  api_key_id?: string | null;
  config_id: string;
  url: string;
  method: string;
  timeout_ms: number;
  trusted: boolean;
  payment_method_ids: string[];
  /** Absent in plans stored before checkout sessions. */
  checkout_session_id?: string | null;
  authentication_ids: string[];
  /** Absent in plans stored before the header was read: false. */
  merchant_initiated?: boolean;
  passed_headers: Array<[string, string]>;
  header_templates: Array<[string, string]>;
  body_base64: string | null;
  /** The escape style alone, as plans stored before body_encoding have it (and older workers read). */
  body_style: 'json' | 'raw';
  /** Absent in plans stored before escaping by content type: then derived from the content type. */
  body_encoding?: BodyEncoding;
}

/** The plan as JSON. Only on request: the synchronous path never serialises. */
export function serializePlan(plan: ForwardPlan): string {
  // A cryptogram is single-use and never stored: the queued path refuses it before planning.
  if (plan.cryptograms?.some((c) => c !== null)) throw new Error('a plan with cryptograms is never serialised');
  const document: SerializedPlan = {
    v: plan.version,
    id: plan.id,
    merchant_account_id: plan.merchantAccountId,
    api_key_id: plan.apiKeyId,
    config_id: plan.configId,
    url: plan.url.href,
    method: plan.method,
    timeout_ms: plan.timeoutMs,
    trusted: plan.trusted,
    payment_method_ids: [...plan.paymentMethodIds],
    checkout_session_id: plan.checkoutSessionId,
    authentication_ids: [...plan.authenticationIds],
    merchant_initiated: plan.merchantInitiated,
    passed_headers: plan.passedHeaders.map(([n, v]) => [n, v]),
    header_templates: plan.headerTemplates.map(([n, v]) => [n, v]),
    body_base64: plan.body ? plan.body.toString('base64') : null,
    body_style: escapeStyleFor(plan.bodyEncoding),
    body_encoding: plan.bodyEncoding,
  };
  return JSON.stringify(document);
}

function forwardMethod(value: unknown): ForwardMethod {
  if (typeof value !== 'string' || !(FORWARD_METHODS as readonly string[]).includes(value))
    throw new InvalidForwardPlanError('method is not a forward method');
  return value as ForwardMethod;
}

/** A plan read back from serializePlan's output, without `local`; the executor re-scans it. */
export function deserializePlan(text: string | Buffer): ForwardPlan {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof text === 'string' ? text : text.toString('utf8'));
  } catch {
    throw new InvalidForwardPlanError('not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null) throw new InvalidForwardPlanError('not an object');
  const d = parsed as Partial<SerializedPlan>;
  if (d.v !== FORWARD_PLAN_VERSION)
    throw new InvalidForwardPlanError(`version ${String(d.v)}, expected ${FORWARD_PLAN_VERSION}`);
  const str = (value: unknown, name: string): string => {
    if (typeof value !== 'string') throw new InvalidForwardPlanError(`${name} is not a string`);
    return value;
  };
  const strings = (value: unknown, name: string): string[] => {
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
      throw new InvalidForwardPlanError(`${name} is not a list of strings`);
    return value;
  };
  const pairs = (value: unknown, name: string): Array<[string, string]> => {
    if (
      !Array.isArray(value) ||
      !value.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && typeof p[1] === 'string')
    ) {
      throw new InvalidForwardPlanError(`${name} is not a list of pairs`);
    }
    return value as Array<[string, string]>;
  };
  let url: URL;
  try {
    url = new URL(str(d.url, 'url'));
  } catch (error) {
    if (error instanceof InvalidForwardPlanError) throw error;
    throw new InvalidForwardPlanError('url is not a URL');
  }
  if (typeof d.timeout_ms !== 'number' || !Number.isInteger(d.timeout_ms) || d.timeout_ms <= 0)
    throw new InvalidForwardPlanError('timeout_ms is not a positive integer');
  if (typeof d.trusted !== 'boolean') throw new InvalidForwardPlanError('trusted is not a boolean');
  if (d.body_style !== 'json' && d.body_style !== 'raw')
    throw new InvalidForwardPlanError('body_style is neither json nor raw');
  if (d.body_base64 !== null && typeof d.body_base64 !== 'string')
    throw new InvalidForwardPlanError('body_base64 is neither null nor a string');
  if (d.merchant_initiated !== undefined && typeof d.merchant_initiated !== 'boolean')
    throw new InvalidForwardPlanError('merchant_initiated is not a boolean');
  if (d.body_encoding !== undefined && !BODY_ENCODINGS.includes(d.body_encoding))
    throw new InvalidForwardPlanError('body_encoding is not a body encoding');
  const body = d.body_base64 ? Buffer.from(d.body_base64, 'base64') : undefined;
  const passedHeaders = pairs(d.passed_headers, 'passed_headers');
  const headerTemplates = pairs(d.header_templates, 'header_templates');
  return {
    version: FORWARD_PLAN_VERSION,
    id: str(d.id, 'id'),
    merchantAccountId: str(d.merchant_account_id, 'merchant_account_id'),
    apiKeyId: d.api_key_id == null ? null : str(d.api_key_id, 'api_key_id'),
    configId: str(d.config_id, 'config_id'),
    url,
    method: forwardMethod(d.method),
    timeoutMs: d.timeout_ms,
    trusted: d.trusted,
    paymentMethodIds: strings(d.payment_method_ids, 'payment_method_ids'),
    checkoutSessionId: d.checkout_session_id == null ? null : str(d.checkout_session_id, 'checkout_session_id'),
    authenticationIds: strings(d.authentication_ids, 'authentication_ids'),
    merchantInitiated: d.merchant_initiated ?? false,
    passedHeaders,
    headerTemplates,
    body: body && body.length > 0 ? body : undefined,
    // A plan stored before body_encoding: its JSON style stays; otherwise the content type decides, as now.
    bodyEncoding:
      d.body_encoding ??
      (d.body_style === 'json' ? 'json' : bodyEncodingFor(outgoingContentType(headerTemplates, passedHeaders))),
  };
}

/** The content type the target gets: x-vault-forward-header-content-type if given, else the caller's. */
export function outgoingContentType(
  headerTemplates: ReadonlyArray<readonly [string, string]>,
  passedHeaders: ReadonlyArray<readonly [string, string]>,
): string {
  return (
    headerTemplates.find(([name]) => name === 'content-type')?.[1] ??
    passedHeaders.find(([name]) => name === 'content-type')?.[1] ??
    ''
  );
}
