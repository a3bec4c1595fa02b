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

type Of<K extends SignerMaterial['kind']> = Extract<SignerMaterial, { kind: K }>;

export function cybersourceSignature(
  request: SignableRequest,
  m: Of<'http-signature'>,
  nowMs: number,
): Record<string, string> {
  return cybersourceHeaders(request, m, nowMs);
}

export function oauth1Signature(request: SignableRequest, m: Of<'oauth1-rsa'>, nowMs: number): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  return {
    authorization: oauthAuthorization(request, { consumerKey: m.consumerKey, timestamp, nonce: oauthNonce() }, m.key),
  };
}

export function awsSigV4(request: SignableRequest, m: Of<'aws-sigv4'>, nowMs: number): Record<string, string> {
  return sigV4(request, m, nowMs).headers;
}

export function messageSignature(
  request: SignableRequest,
  m: Of<'http-message-signature'>,
  nowMs: number,
): Record<string, string> {
  return messageSignatureHeaders(request, m, nowMs);
}
