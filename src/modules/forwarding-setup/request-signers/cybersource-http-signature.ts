import { createHash, createHmac, KeyObject } from 'node:crypto';
import { hostHeader, httpDate, SignableRequest } from './signable';

/**
 * Cybersource's HTTP Signature, as its REST SDKs compute it (SignatureParameterGenerator, HTTPSigToken):
 * the lines `host`, `date`, `request-target` (lower-case method, space, path and query), `digest` (for
 * methods with a body) and `v-c-merchant-id`, joined by `\n`, HMAC-SHA256 with the base64-decoded shared
 * secret, base64.
 */
interface CybersourceCredentials {
  merchantId: string;
  keyId: string;
  /** The shared secret, base64-decoded. */
  secret: KeyObject;
}

/** GET and DELETE are signed without a digest (the SDKs'); other methods with a body, or POST/PUT/PATCH, with one. */
const WITHOUT_DIGEST = new Set(['get', 'delete', 'head', 'options']);

export function cybersourceSigningString(
  request: SignableRequest,
  date: string,
  merchantId: string,
): { signingString: string; headerNames: string; digest: string | undefined } {
  const method = request.method.toLowerCase();
  const digest = WITHOUT_DIGEST.has(method)
    ? undefined
    : `SHA-256=${createHash('sha256')
        .update(request.body ?? Buffer.alloc(0))
        .digest('base64')}`;
  const lines = [
    `host: ${hostHeader(request.url)}`,
    `date: ${date}`,
    `request-target: ${method} ${request.url.pathname}${request.url.search}`,
    ...(digest ? [`digest: ${digest}`] : []),
    `v-c-merchant-id: ${merchantId}`,
  ];
  const headerNames = digest
    ? 'host date request-target digest v-c-merchant-id'
    : 'host date request-target v-c-merchant-id';
  return { signingString: lines.join('\n'), headerNames, digest };
}

export function cybersourceHeaders(
  request: SignableRequest,
  credentials: CybersourceCredentials,
  nowMs: number,
): Record<string, string> {
  const date = httpDate(nowMs);
  const { signingString, headerNames, digest } = cybersourceSigningString(request, date, credentials.merchantId);
  const signature = createHmac('sha256', credentials.secret).update(signingString, 'utf8').digest('base64');
  return {
    'v-c-merchant-id': credentials.merchantId,
    date,
    ...(digest ? { digest } : {}),
    signature:
      `keyid="${credentials.keyId}", algorithm="HmacSHA256", headers="${headerNames}", ` + `signature="${signature}"`,
  };
}
