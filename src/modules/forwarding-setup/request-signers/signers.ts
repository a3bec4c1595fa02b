import type { KeyObject } from 'node:crypto';
import { sigV4 } from './aws-sigv4';
import { cybersourceHeaders } from './cybersource-http-signature';
import { messageSignatureHeaders, MessageSignatureOptions } from './http-message-signature';
import { oauthAuthorization, oauthNonce } from './mastercard-oauth1';
import type { SignableRequest } from './signable';

/**
 * What each signing kind keeps prepared (keys parsed once per method version), and the one call per kind
 * that returns the headers it adds to a request as it will be sent.
 */
export type SignerMaterial =
  | { kind: 'http-signature'; merchantId: string; keyId: string; secret: KeyObject }
  | { kind: 'oauth1-rsa'; consumerKey: string; key: KeyObject }
  | {
      kind: 'aws-sigv4';
      accessKeyId: string;
      secretAccessKey: string;
      sessionToken: string | undefined;
      region: string;
      service: string;
    }
  | ({ kind: 'http-message-signature' } & MessageSignatureOptions);

/** The headers a signing kind adds to the request as it will be sent, signed at `nowMs` (private keys off the loop). */
export async function signerHeaders(
  request: SignableRequest,
  m: SignerMaterial,
  nowMs: number,
): Promise<Record<string, string>> {
  switch (m.kind) {
    case 'http-signature':
      return cybersourceHeaders(request, m, nowMs);
    case 'oauth1-rsa': {
      const timestamp = String(Math.floor(nowMs / 1000));
      const parameters = { consumerKey: m.consumerKey, timestamp, nonce: oauthNonce() };
      return { authorization: await oauthAuthorization(request, parameters, m.key) };
    }
    case 'aws-sigv4':
      return (await sigV4(request, m, nowMs)).headers;
    case 'http-message-signature':
      return messageSignatureHeaders(request, m, nowMs);
  }
}
