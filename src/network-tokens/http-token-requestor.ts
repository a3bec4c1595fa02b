import { Logger } from '@nestjs/common';
import type { TokenRequestorConfig } from '../config/config';
import { CryptogramRequest, isCryptogram, TokenRequestor, TokenRequestorError } from './token-requestor';

/** An answer larger than this is not a cryptogram: it is not read further. */
const MAX_ANSWER_BYTES = 16 * 1024;

/**
 * The one TokenRequestor: POSTs `{ payment_method_id, network_token_id, network_token, expiration_date,
 * merchant_initiated }` as JSON to NETWORK_TOKEN_REQUESTOR_URL (with NETWORK_TOKEN_REQUESTOR_AUTHORIZATION
 * as Authorization, when set) and expects 200 `{ "cryptogram": "…" }`. The whole exchange is bounded by
 * NETWORK_TOKEN_REQUESTOR_TIMEOUT_MS. Its log lines name the status or the failure, never a value.
 */
export class HttpTokenRequestor implements TokenRequestor {
  readonly configured = true;
  private readonly logger = new Logger('TokenRequestor');

  constructor(private readonly config: TokenRequestorConfig) {}

  async cryptogram(request: CryptogramRequest): Promise<string> {
    const signal = AbortSignal.timeout(this.config.timeoutMs);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.config.authorization) headers.authorization = this.config.authorization;
    try {
      const response = await fetch(this.config.url, {
        method: 'POST',
        headers,
        redirect: 'error',
        signal,
        body: JSON.stringify({
          payment_method_id: request.paymentMethodId,
          network_token_id: request.networkTokenId,
          network_token: request.token,
          expiration_date: request.expirationDate,
          merchant_initiated: request.merchantInitiated,
        }),
      });
      const text = await readBounded(response);
      if (response.status !== 200) throw this.failed(`answered ${response.status}`);
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

/** The body as text, up to MAX_ANSWER_BYTES (then a failure: a cryptogram is a few dozen bytes). */
async function readBounded(response: Response): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await response.body.cancel().catch(() => undefined);
      throw new TokenRequestorError('failed', `the token requestor answered more than ${MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
