import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Dispatcher } from 'undici';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { ProblemException } from '../../../platform/problem/problem';
import { SharedCaches } from '../../../platform/redis/shared-cache';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { addressKind } from '../../forwarding-setup/targets/addresses';
import { hostsEnable } from '../../forwarding-setup/targets/http-methods';
import { blocked, DownstreamClient, unreachableReason } from './downstream-client';
import { OutboundErrors } from './outbound.errors';
import { checkOutbound } from './outbound-policy';
import { SharedTokens } from './shared-tokens';
import { HeldToken, IssuedToken, MAX_TOKEN_LIFETIME_S, TokenCache } from './token-cache';

/** The SharedCache of access tokens in this process's memory; its notices drop a refused token in every process. */
const OAUTH2_TOKENS_CACHE = 'oauth2-access-tokens';
/** The longest a token request may take, or the forward's own timeout when shorter. */
const TOKEN_REQUEST_TIMEOUT_MS = 10_000;
/** A token answer is a small JSON object; anything larger is not read. */
const MAX_ANSWER_BYTES = 64 * 1024;
const MAX_TOKEN_CHARS = 8 * 1024;
/** What a header value can carry of a token: visible ASCII, no space (RFC 6750's b64token is a subset). */
const SENDABLE_TOKEN = /^[\x21-\x7e]+$/;

/** What a prepared oauth2-client-credentials method holds (its secret included): never log it. */
export interface OAuth2Client {
  methodId: string;
  version: string;
  tokenUrl: URL;
  /** The form body of the token request (with the client secret when `client_auth` is `body`). */
  form: string;
  /** `Basic …` when `client_auth` is `basic`. */
  authorization: string | undefined;
}

/** The token endpoint is not on a host of the method's config; the message names no value. */
export class TokenUrlRefused extends Error {}

/**
 * Obtains the access tokens of oauth2-client-credentials methods (RFC 6749 §4.4: `grant_type=
 * client_credentials`, client authentication by HTTP Basic or in the body, §2.3.1) and keeps them
 * (TokenCache, shared between processes by SharedTokens when Redis is configured). The token request
 * obeys the outbound policy of targets (checkOutbound) and goes out through the forwards' own dispatchers:
 * https unless FORWARD_INSECURE_HOSTS lists the host, the host enabled by the method's config, resolved
 * and connected through the address guard; redirects are not followed. A
 * failure is a 502 or 504 problem of ours naming the method and a status or a network reason, never the
 * endpoint's answer, which may echo the credentials.
 */
@Injectable()
export class OAuth2Tokens {
  private readonly logger = new Logger('OAuth2Tokens');
  private readonly cache: TokenCache;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly downstream: DownstreamClient,
    caches: SharedCaches,
    shared: SharedTokens,
    @Inject(CLOCK) clock: Clock,
  ) {
    this.cache = new TokenCache(
      caches.create<HeldToken>(OAUTH2_TOKENS_CACHE, { max: 10_000, ttlMs: MAX_TOKEN_LIFETIME_S * 1000 }),
      () => clock.epochMs(),
      shared,
    );
  }

  /**
   * The method's access token, held or obtained now. The outbound policy's problem (as for a target) when
   * it refuses the endpoint, TokenUrlRefused when the config does not enable its host (both checked on
   * every use: FORWARD_INSECURE_HOSTS or the config's hosts may have changed since the method was written).
   */
  bearer(client: OAuth2Client, configHosts: ReadonlySet<string>, timeoutMs: number): Promise<string> {
    const trusted = checkOutbound(
      this.config.forwardInsecureHosts,
      client.tokenUrl,
      `The token_url of authentication method ${client.methodId}`,
      { location: 'header', name: 'x-vault-forward-authentications', prefix: `${client.methodId}: token_url ` },
    );
    if (!hostsEnable(configHosts, client.tokenUrl))
      throw new TokenUrlRefused('the host of its token_url is not one of the hosts of its config');
    const requestTimeoutMs = Math.min(TOKEN_REQUEST_TIMEOUT_MS, timeoutMs);
    return this.cache.token(
      client.methodId,
      client.version,
      () => this.request(client, trusted, requestTimeoutMs),
      requestTimeoutMs,
    );
  }

  /** The target answered 401 to a request with `accessToken`: the next forward asks for a new one. */
  refused(client: OAuth2Client, accessToken: string): Promise<void> {
    return this.cache.refused(client.methodId, client.version, accessToken);
  }

  forget(methodId: string | null): void {
    this.cache.forget(methodId);
  }

  private async request(client: OAuth2Client, trusted: boolean, timeoutMs: number): Promise<IssuedToken> {
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (client.authorization) headers.authorization = client.authorization;
    const signal = AbortSignal.timeout(timeoutMs);
    let response: Dispatcher.ResponseData;
    try {
      response = await this.downstream.pool.get(trusted, null).request({
        origin: client.tokenUrl.origin,
        path: `${client.tokenUrl.pathname}${client.tokenUrl.search}`,
        method: 'POST',
        headers,
        body: client.form,
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw this.timedOut(client, timeoutMs);
      const guard = blocked(error);
      throw this.failed(
        client,
        guard
          ? `its host resolves to ${addressKind(guard.reason)}`
          : `it could not be reached: ${unreachableReason(error)}`,
      );
    }
    if (response.statusCode < 200 || response.statusCode > 299) {
      // Not read: an error answer may repeat the request, credentials included.
      discard(response.body);
      throw this.failed(client, `it answered ${response.statusCode}`);
    }
    let text: string | null;
    try {
      text = await readBounded(response.body);
    } catch {
      if (signal.aborted) throw this.timedOut(client, timeoutMs);
      throw this.failed(client, 'its answer was cut off');
    }
    if (text === null) throw this.failed(client, `it answered more than ${MAX_ANSWER_BYTES} bytes`);
    return this.issued(client, text);
  }

  /** RFC 6749 §5.1: a JSON object with `access_token`, `token_type` Bearer (case-insensitive) and maybe `expires_in`. */
  private issued(client: OAuth2Client, text: string): IssuedToken {
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw this.failed(client, 'its answer is not JSON');
    }
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
      throw this.failed(client, 'its answer is not a JSON object');
    const { access_token: token, token_type: type, expires_in: expiresIn } = answer as Record<string, unknown>;
    if (typeof token !== 'string' || token.length === 0) throw this.failed(client, 'its answer has no access_token');
    if (token.length > MAX_TOKEN_CHARS || !SENDABLE_TOKEN.test(token))
      throw this.failed(client, 'its access_token cannot be sent in a header');
    if (type !== undefined && (typeof type !== 'string' || type.toLowerCase() !== 'bearer'))
      throw this.failed(client, 'it issued a token that is not a Bearer token');
    // Some endpoints write the number as a string; anything else counts as absent (the default lifetime).
    const seconds = typeof expiresIn === 'string' && /^\d+$/.test(expiresIn) ? Number(expiresIn) : expiresIn;
    return {
      accessToken: token,
      expiresInS: typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined,
    };
  }

  private failed(client: OAuth2Client, reason: string): ProblemException {
    this.logger.warn({ msg: 'no access token', method: client.methodId, host: client.tokenUrl.host, reason });
    return new ProblemException(
      OutboundErrors.tokenEndpointFailed,
      `Authentication method ${client.methodId} could not obtain an access token from ${client.tokenUrl.host}: ` +
        `${reason}. Nothing was sent to the target.`,
    );
  }

  private timedOut(client: OAuth2Client, timeoutMs: number): ProblemException {
    this.logger.warn({
      msg: 'token endpoint timed out',
      method: client.methodId,
      host: client.tokenUrl.host,
      timeoutMs,
    });
    return new ProblemException(
      OutboundErrors.tokenEndpointTimeout,
      `Authentication method ${client.methodId} could not obtain an access token: ${client.tokenUrl.host} did not ` +
        `answer within ${timeoutMs / 1000} s. Nothing was sent to the target.`,
    );
  }
}

/** The body as text, or null past MAX_ANSWER_BYTES (then no more is read). */
async function readBounded(body: Dispatcher.ResponseData['body']): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      discard(body);
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/** Lets go of an answer's connection unread; undici reports the abort as an error, which is expected here. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}
