import { Logger } from '@nestjs/common';
import { Agent, request as send } from 'undici';
import type { TokenRequestorConfig } from '../../../platform/config/config';
import { CryptogramRequest, isCryptogram, TokenRequestor, TokenRequestorError } from './token-requestor';

/** An answer larger than this is not a cryptogram: it is not read further. */
const MAX_ANSWER_BYTES = 16 * 1024;
/** Connections kept to the requestor at most: a burst of forwards queues behind them instead of opening more. */
const MAX_CONNECTIONS = 16;

/**
 * The one TokenRequestor: POSTs `{ payment_method_id, network_token_id, network_token, expiration_date,
 * merchant_initiated }` as JSON to NETWORK_TOKEN_REQUESTOR_URL (with NETWORK_TOKEN_REQUESTOR_AUTHORIZATION
 * as Authorization, when set) and expects 200 `{ "cryptogram": "…" }`. The whole exchange is bounded by
 * NETWORK_TOKEN_REQUESTOR_TIMEOUT_MS. Its log lines name the status or the failure, never a value.
 * Sent through undici with an agent of its own (bounded connections and answer size; redirects are not
 * followed, so a 3xx is a failure), not through the forwarding dispatchers: the operator configures this
 * endpoint, so it is neither an allow-listed target nor subject to their address guard.
 */
export class HttpTokenRequestor implements TokenRequestor {
  readonly configured = true;
  private readonly logger = new Logger('TokenRequestor');
  private readonly agent = new Agent({ connections: MAX_CONNECTIONS, maxResponseSize: MAX_ANSWER_BYTES });

  constructor(private readonly config: TokenRequestorConfig) {}

  /** Nest calls it on the provider's instance at shutdown: the agent's sockets must not keep the process up. */
  onApplicationShutdown(): Promise<void> {
    return this.agent.close();
  }

  async cryptogram(request: CryptogramRequest): Promise<string> {
    const signal = AbortSignal.timeout(this.config.timeoutMs);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.config.authorization) headers.authorization = this.config.authorization;
    try {
      const response = await send(this.config.url, {
        method: 'POST',
        headers,
        signal,
        dispatcher: this.agent,
        body: JSON.stringify({
          payment_method_id: request.paymentMethodId,
          network_token_id: request.networkTokenId,
          network_token: request.token,
          expiration_date: request.expirationDate,
          merchant_initiated: request.merchantInitiated,
        }),
      });
      const text = await readBounded(response.body);
      if (text === null) throw this.failed(`answered more than ${MAX_ANSWER_BYTES} bytes`);
      const status = response.statusCode;
      if (status !== 200) throw this.failed(`answered ${status}`);
      let cryptogram: unknown;
      try {
        cryptogram = (JSON.parse(text) as { cryptogram?: unknown } | null)?.cryptogram;
      } catch {
        throw this.failed('answered 200 with a body that is not JSON');
      }
      if (typeof cryptogram !== 'string' || !isCryptogram(cryptogram))
        throw this.failed('answered 200 without a well-formed cryptogram (8–128 base64 or hex characters)');
      return cryptogram;
    } catch (error) {
      if (error instanceof TokenRequestorError) throw error;
      if (signal.aborted) {
        this.logger.warn({ msg: 'token requestor timed out', timeoutMs: this.config.timeoutMs });
        throw new TokenRequestorError('timeout', `no answer within ${this.config.timeoutMs} ms`);
      }
      // A network failure: its name and code only (undici's cause names the address, never a value).
      const cause = (error as { cause?: { code?: unknown } }).cause?.code;
      throw this.failed(`could not be reached (${typeof cause === 'string' ? cause : (error as Error).name})`);
    }
  }

  private failed(reason: string): TokenRequestorError {
    this.logger.warn({ msg: `token requestor ${reason}` });
    return new TokenRequestorError('failed', `the token requestor ${reason}`);
  }
}

/** The body as text; past MAX_ANSWER_BYTES the agent aborts it (a cryptogram is a few dozen bytes): null. */
async function readBounded(body: { text(): Promise<string> }): Promise<string | null> {
  try {
    return await body.text();
  } catch (error) {
    if ((error as { code?: unknown }).code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return null;
    throw error;
  }
}
