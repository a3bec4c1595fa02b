import { createPrivateKey, createPublicKey, KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';

/**
 * The merchant's private key for encrypted answers (a `jwe-payload` method's `response_private_key`,
 * decision 0103): what is accepted, and the facts about it that may be shown. Read by the field rules
 * (a 400 naming the field), by the method's stored facts, and by the answer's decryption
 * (modules/forwarding/answers/mle-answers.ts). No message here quotes the value.
 */

/** RSA from 2048 bits (weaker is refused by every MLE issuer) to 8192 (bounds one private operation's CPU). */
export const RSA_MIN_BITS = 2048;
export const RSA_MAX_BITS = 8192;
/** node:crypto's names of P-256, P-384 and P-521. */
const CURVES: Readonly<Record<string, string>> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

/** What may be returned about a response key: its type and size, and its public key's RFC 7638 thumbprint. */
export interface ResponseKeyFacts {
  type: 'rsa' | 'ec';
  size_bits?: number;
  curve?: string;
  /** base64url SHA-256 JWK thumbprint (RFC 7638) of the public half: to tell which key is set, not the key. */
  public_key_thumbprint: string;
}

/** The key, or why it is refused (a phrase for `fields.response_private_key must …`). */
export function readResponseKey(value: string): { key: KeyObject } | { problem: string } {
  let key: KeyObject;
  try {
    key = value.trimStart().startsWith('{')
      ? createPrivateKey({ key: JSON.parse(value) as import('node:crypto').JsonWebKey, format: 'jwk' })
      : createPrivateKey(value);
  } catch {
    return {
      problem:
        'must be an unencrypted private key: PEM (PKCS#8, PKCS#1 or SEC1) or a private JWK (JSON with "d") that parses',
    };
  }
  if (key.asymmetricKeyType === 'rsa') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < RSA_MIN_BITS || bits > RSA_MAX_BITS)
      return { problem: `must be an RSA key of ${RSA_MIN_BITS} to ${RSA_MAX_BITS} bits (this one has ${bits})` };
    return { key };
  }
  if (key.asymmetricKeyType === 'ec') {
    if (CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''] === undefined)
      return { problem: 'must be an EC key on P-256, P-384 or P-521' };
    return { key };
  }
  return { problem: 'must be an RSA or EC key (RSA-OAEP or ECDH-ES answers)' };
}

/** The facts of a key readResponseKey accepted. */
export async function responseKeyFacts(key: KeyObject): Promise<ResponseKeyFacts> {
  const publicJwk = createPublicKey(key).export({ format: 'jwk' }) as JWK;
  const details = key.asymmetricKeyDetails;
  return {
    type: key.asymmetricKeyType === 'rsa' ? 'rsa' : 'ec',
    ...(details?.modulusLength ? { size_bits: details.modulusLength } : {}),
    ...(details?.namedCurve ? { curve: CURVES[details.namedCurve] ?? details.namedCurve } : {}),
    public_key_thumbprint: await calculateJwkThumbprint(publicJwk, 'sha256'),
  };
}
