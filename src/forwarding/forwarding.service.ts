import { performance } from 'node:perf_hooks';
import { finished, Readable } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { Metrics } from '../metrics/metrics.service';
import { ProblemException } from '../common/problem/problem';
import { ForwardAuthenticationsService } from '../forward-authentications/forward-authentications.service';
import { VaultForwardConfigsService } from '../vault-forward-configs/vault-forward-configs.service';
import { PaymentMethodResolver } from '../vault/payment-method-resolver.service';
import { filledByteLength, fillBytes, fillScan, jsonStringContent, PlaceholderError, PlaceholderScan, PlaceholderUse, scanText } from '../vault/placeholders';
import { literalBlockReason } from '../targets/addresses';
import { DownstreamClient, DownstreamResponse } from './downstream-client';
import { ForwardRecord, ForwardRecordsService } from './forward-records.service';
import { ForwardSpec, HEADER_PREFIX, parseForwardHeaders, URL_HEADER } from './forward-headers';
import { ForwardingErrors } from './forwarding.errors';
import { hostKey, isInsecureHost } from '../targets/http-methods';
import type { InflightLease } from './inflight-bytes';
import { AuthenticationSteps } from './outbound/authentication-steps';
import type { OutboundRequest } from './outbound/outbound-request';

/** Caller headers that describe the body or the wanted answer; everything else stays here. */
const PASSED_THROUGH = ['content-type', 'accept', 'accept-language'];
const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;

export interface ForwardInput {
  merchantAccountId: string;
  /** Id of this forward and of its record (x-vault-forward-request-id). */
  requestId: string;
  headers: IncomingHttpHeaders;
  /** Node's raw header list, to detect repeated forwarding headers. */
  rawHeaders: string[];
  body: Buffer | undefined;
  /** Counts the filled body among the bytes in flight (the handler's, which also counts the request body). */
  lease?: InflightLease;
}

/**
 * What undici (and HTTP/1.1) can carry in a header value: tab, visible ASCII, and Latin-1's upper
 * half. A character class, so one linear pass.
 */
const UNSENDABLE_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * POST /vault-forward, step by step: read the forwarding headers, check the target (https, enabled
 * by a config, public address), find the placeholders, fill them from the vault, send, and record
 * what happened. Card values exist only inside this call; nothing here logs a body or a header value.
 */
@Injectable()
export class ForwardingService {
  constructor(
    private readonly configs: VaultForwardConfigsService,
    private readonly resolver: PaymentMethodResolver,
    private readonly downstream: DownstreamClient,
    private readonly records: ForwardRecordsService,
    private readonly authentications: ForwardAuthenticationsService,
    private readonly steps: AuthenticationSteps,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly appConfig: AppConfig,
  ) {}

  async forward(input: ForwardInput): Promise<DownstreamResponse> {
    const started = performance.now();
    const record: ForwardRecord = {
      id: input.requestId,
      merchantAccountId: input.merchantAccountId,
      configId: null,
      method: null,
      targetUrl: null,
      status: null,
      durationMs: 0,
      paymentMethodIds: [],
      authenticationIds: [],
      errorType: null,
    };
    const write = () => {
      record.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
      this.records.write(record);
      this.metrics.forwardFinished(record.status, record.errorType, record.durationMs / 1000);
    };
    let response: DownstreamResponse;
    try {
      response = await this.send(input, record);
    } catch (error) {
      if (error instanceof ProblemException) {
        record.status = error.status;
        record.errorType = error.definition.code;
      } else {
        record.status = 500;
        record.errorType = 'internal-error';
      }
      write();
      throw error;
    }
    record.status = response.status;
    if (!(response.body instanceof Readable)) {
      write();
      return response;
    }
    // A streamed answer is recorded once it has gone through, or with what cut it off.
    finished(response.body, (error) => {
      if (error) record.errorType = error instanceof ProblemException ? error.definition.code : 'client-disconnected';
      write();
    });
    return response;
  }

  private async send(input: ForwardInput, record: ForwardRecord): Promise<DownstreamResponse> {
    const spec = parseForwardHeaders(input.headers, input.rawHeaders);
    record.method = spec.method;
    record.targetUrl = `${spec.url.origin}${spec.url.pathname}`;
    record.paymentMethodIds = spec.paymentMethodIds;
    record.authenticationIds = spec.authenticationIds;

    const trusted = this.checkTransport(spec.url);
    record.configId = await this.enablingConfig(input.merchantAccountId, spec);
    // Checked before any card is opened: each id must be a usable method of this merchant and config.
    const methods =
      spec.authenticationIds.length > 0 ? await this.authentications.forForward(input.merchantAccountId, record.configId, spec.authenticationIds) : [];

    const filled = await this.fillPlaceholders(input, spec);
    let request: OutboundRequest = { url: spec.url, method: spec.method, timeoutMs: spec.timeoutMs, trusted, identity: null, ...filled };
    // After the placeholders, in the caller's order: what a method signs or encrypts is what is sent.
    if (methods.length > 0) request = await this.steps.apply(request, methods);
    // Card data leaves only once its disclosure is on record: committed, or spooled and fsync'd (or 503, nothing sent).
    if (spec.paymentMethodIds.length > 0) await this.records.disclose(record);
    return this.downstream.send(request);
  }

  /** https only (http for operator-listed hosts), and IP literals must be public addresses. */
  private checkTransport(url: URL): boolean {
    if (isInsecureHost(this.appConfig.forwardInsecureHosts, hostKey(url))) return true;
    if (url.protocol !== 'https:') {
      throw new ProblemException(ForwardingErrors.insecureTarget, 'The target must be an https URL.', [
        { location: 'header', name: URL_HEADER, message: 'must use https' },
      ]);
    }
    const reason = literalBlockReason(url.hostname);
    if (reason) {
      throw new ProblemException(ForwardingErrors.targetAddressForbidden, `The target is a ${reason} address, which may not be forwarded to.`, [
        { location: 'header', name: URL_HEADER, message: `${reason} address` },
      ]);
    }
    return false;
  }

  private async enablingConfig(merchantAccountId: string, spec: ForwardSpec): Promise<string> {
    const key = hostKey(spec.url);
    const configs = await this.configs.enabledConfigs(merchantAccountId);
    const match = configs.find((c) => c.hosts.has(key) && c.methods.has(spec.method));
    if (match) return match.id;
    const hostOnly = configs.some((c) => c.hosts.has(key));
    throw new ProblemException(
      ForwardingErrors.endpointNotEnabled,
      hostOnly ? `${key} is enabled, but not for ${spec.method}.` : `${key} is not enabled for this merchant account.`,
      [{ location: 'header', name: URL_HEADER, message: hostOnly ? `method ${spec.method} not enabled for this host` : 'host not enabled' }],
    );
  }

  /**
   * Placeholders are found before anything is decrypted, in one pass whose result the fill reuses,
   * and substituted on the raw bytes (read as latin1, a byte-for-byte mapping), so the body goes out
   * unchanged apart from the filled values. The filled size is known before the body is built.
   */
  private async fillPlaceholders(input: ForwardInput, spec: ForwardSpec): Promise<{ headers: Record<string, string>; body: Buffer | undefined }> {
    const count = spec.paymentMethodIds.length;
    const body = input.body && input.body.length > 0 ? input.body : undefined;
    const contentType = spec.headers.find(([name]) => name === 'content-type')?.[1] ?? input.headers['content-type'] ?? '';
    const style = JSON_TYPE.test(String(contentType)) ? 'json' : 'raw';
    const placeholderProblem = (error: unknown, location: 'body' | 'header', name: string) => {
      if (!(error instanceof PlaceholderError)) return error;
      return new ProblemException(ForwardingErrors.invalidPlaceholder, error.message, [{ location, name, message: error.message }]);
    };
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
    const headerScans: Array<[string, PlaceholderScan]> = [];
    for (const [name, value] of spec.headers) {
      try {
        const scan = scanText(value, count);
        uses.push(...scan.uses);
        headerScans.push([name, scan]);
      } catch (error) {
        throw placeholderProblem(error, 'header', `${HEADER_PREFIX}${name}`);
      }
    }
    // Only what the request uses is computed, and a card is decrypted only for its number or name.
    const values = await this.resolver.resolve(input.merchantAccountId, spec.paymentMethodIds, uses);

    const headers: Record<string, string> = {};
    for (const name of PASSED_THROUGH) {
      const value = input.headers[name];
      if (typeof value === 'string') headers[name] = sendableHeader(name, value, name);
    }
    for (const [name, scan] of headerScans) {
      headers[name] = sendableHeader(name, fillScan(scan, (token) => valueFor(values, token)), `${HEADER_PREFIX}${name}`);
    }

    if (!body || !bodyScan) return { headers, body: undefined };
    if (bodyScan.matches.length === 0) return { headers, body };
    // Each token is encoded once, however often it appears: UTF-8, JSON-escaped in a JSON body.
    const encoded = new Map<string, Buffer>();
    for (const m of bodyScan.matches) {
      if (m.escaped || encoded.has(m.token)) continue;
      const value = valueFor(values, m.token);
      encoded.set(m.token, Buffer.from(style === 'json' ? jsonStringContent(value) : value, 'utf8'));
    }
    const length = filledByteLength(bodyScan, encoded);
    const limit = this.appConfig.forwardMaxFilledBodyBytes;
    if (length > limit) {
      throw new ProblemException(
        ForwardingErrors.filledBodyTooLarge,
        `With its placeholders filled the body would be ${length} bytes, more than the ${limit} bytes FORWARD_MAX_FILLED_BODY_BYTES allows; nothing was sent.`,
        [{ location: 'body', name: 'body', message: `filled body over ${limit} bytes` }],
      );
    }
    input.lease?.take(length, { location: 'body', name: 'body', message: 'no room for the filled body now' });
    return { headers, body: fillBytes(body, bodyScan, encoded, length) };
  }
}

function valueFor(values: ReadonlyMap<string, string>, token: string): string {
  const value = values.get(token);
  if (value === undefined) throw new Error(`no value resolved for ${token}`); // a bug, not user input
  return value;
}

/**
 * A header value as the target will get it, or a 400 naming the header: undici refuses to send a
 * line break, a control character or anything outside Latin-1 (a cardholder name in Chinese, say),
 * and that must not surface as "downstream unreachable" after the fact.
 */
function sendableHeader(target: string, value: string, header: string): string {
  if (!UNSENDABLE_HEADER_CHAR.test(value)) return value;
  const lineBreak = /[\r\n\0]/.test(value);
  const message = lineBreak ? 'filled value contains a line break' : 'filled value has a character a header cannot carry (a control character, or one outside Latin-1)';
  throw new ProblemException(
    ForwardingErrors.invalidHeader,
    lineBreak ? `${header} would contain a line break once filled.` : `${header} would contain a character that cannot be sent in the ${target} header once filled; nothing was sent.`,
    [{ location: 'header', name: header, message }],
  );
}
