import { createPrivateKey, createPublicKey, KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { EC_CURVES, keyBoundsProblem } from './private-keys';

/**
 * The merchant's private key for encrypted answers (a `jwe-payload` method's `response_private_key`,
 * decision 0103): what is accepted, and the facts about it that may be shown. Read by the field rules
 * (a 400 naming the field), by the method's stored facts, and by the answer's decryption
 * (modules/forwarding/answers/mle-answers.ts). No message here quotes the value.
 */

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
  // RSA from 2,048 bits (weaker is refused by every MLE issuer) to 4,096, EC on the three NIST curves (private-keys.ts).
  if (key.asymmetricKeyType !== 'rsa' && key.asymmetricKeyType !== 'ec')
    return { problem: 'must be an RSA or EC key (RSA-OAEP or ECDH-ES answers)' };
  const problem = keyBoundsProblem(key);
  return problem ? { problem } : { key };
}

/** The facts of a key readResponseKey accepted. */
export async function responseKeyFacts(key: KeyObject): Promise<ResponseKeyFacts> {
  const publicJwk = createPublicKey(key).export({ format: 'jwk' }) as JWK;
  const details = key.asymmetricKeyDetails;
  return {
    type: key.asymmetricKeyType === 'rsa' ? 'rsa' : 'ec',
    ...(details?.modulusLength ? { size_bits: details.modulusLength } : {}),
    ...(details?.namedCurve ? { curve: EC_CURVES[details.namedCurve] ?? details.namedCurve } : {}),
    public_key_thumbprint: await calculateJwkThumbprint(publicJwk, 'sha256'),
  };
}
