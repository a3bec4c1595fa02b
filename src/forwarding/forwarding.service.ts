import { performance } from 'node:perf_hooks';
import { finished, Readable } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { ProblemException } from '../common/problem/problem';
import { VaultForwardConfigsService } from '../vault-forward-configs/vault-forward-configs.service';
import { PaymentMethodResolver } from '../vault/payment-method-resolver.service';
import { jsonStringContent, PlaceholderError, PlaceholderUse, scanPlaceholders, substitutePlaceholders } from '../vault/placeholders';
import { literalBlockReason } from './addresses';
import { DownstreamClient, DownstreamResponse } from './downstream-client';
import { ForwardRecord, ForwardRecordsService } from './forward-records.service';
import { AUTHENTICATIONS_HEADER, ForwardSpec, HEADER_PREFIX, parseForwardHeaders, URL_HEADER } from './forward-headers';
import { ForwardingErrors } from './forwarding.errors';
import { hostKey, isInsecureHost } from './http-methods';

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
}

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

    if (spec.authenticationIds.length > 0) {
      throw new ProblemException(ForwardingErrors.notImplemented, 'Stored authentication methods are not available yet; nothing was sent.', [
        { location: 'header', name: AUTHENTICATIONS_HEADER, message: 'not implemented yet' },
      ]);
    }
    const trusted = this.checkTransport(spec.url);
    record.configId = await this.enablingConfig(input.merchantAccountId, spec);

    const request = await this.fillPlaceholders(input, spec);
    // Card data leaves only once its disclosure is on record: committed, or spooled and fsync'd (or 503, nothing sent).
    if (spec.paymentMethodIds.length > 0) await this.records.disclose(record);
    return this.downstream.send({ url: spec.url, method: spec.method, timeoutMs: spec.timeoutMs, trusted, ...request });
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
   * Placeholders are found before anything is decrypted, and substituted on the raw bytes (read as
   * latin1, a byte-for-byte mapping), so the body goes out unchanged apart from the filled values.
   */
  private async fillPlaceholders(input: ForwardInput, spec: ForwardSpec): Promise<{ headers: Record<string, string>; body: Buffer | undefined }> {
    const count = spec.paymentMethodIds.length;
    const bodyText = input.body && input.body.length > 0 ? input.body.toString('latin1') : undefined;
    const contentType = spec.headers.find(([name]) => name === 'content-type')?.[1] ?? input.headers['content-type'] ?? '';
    const style = JSON_TYPE.test(String(contentType)) ? 'json' : 'raw';
    const placeholderProblem = (error: unknown, location: 'body' | 'header', name: string) => {
      if (!(error instanceof PlaceholderError)) return error;
      return new ProblemException(ForwardingErrors.invalidPlaceholder, error.message, [{ location, name, message: error.message }]);
    };
    const uses: PlaceholderUse[] = [];
    try {
      if (bodyText !== undefined) uses.push(...scanPlaceholders(bodyText, count, style));
    } catch (error) {
      throw placeholderProblem(error, 'body', 'body');
    }
    for (const [name, value] of spec.headers) {
      try {
        uses.push(...scanPlaceholders(value, count));
      } catch (error) {
        throw placeholderProblem(error, 'header', `${HEADER_PREFIX}${name}`);
      }
    }
    // Only what the request uses is computed, and a card is decrypted only for its number or name.
    const values = await this.resolver.resolve(input.merchantAccountId, spec.paymentMethodIds, uses);

    const headers: Record<string, string> = {};
    for (const name of PASSED_THROUGH) {
      const value = input.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    for (const [name, value] of spec.headers) {
      const filled = substitutePlaceholders(value, values);
      if (/[\r\n\0]/.test(filled)) {
        throw new ProblemException(ForwardingErrors.invalidHeader, `${HEADER_PREFIX}${name} would contain a line break once filled.`, [
          { location: 'header', name: `${HEADER_PREFIX}${name}`, message: 'filled value contains a line break' },
        ]);
      }
      headers[name] = filled;
    }

    if (bodyText === undefined) return { headers, body: undefined };
    // Values are UTF-8; in the latin1 view of the body each of their bytes is one character.
    const encode = (value: string) => Buffer.from(style === 'json' ? jsonStringContent(value) : value, 'utf8').toString('latin1');
    return { headers, body: Buffer.from(substitutePlaceholders(bodyText, values, encode, style), 'latin1') };
  }
}
