import { checkPrime, createPrivateKey, createPublicKey, JsonWebKey, KeyObject, sign, verify } from 'node:crypto';
import { fromBER, OctetString, Sequence } from 'asn1js';
import type { ProblemFieldError } from '../../../platform/problem/problem';
import { AuthenticationKind, KINDS } from './kinds';

/**
 * The bounds every private key a method holds is kept within (decision 0144), whichever kind takes it:
 * RSA of 2,048 to 4,096 bits, EC on P-256, P-384 or P-521, or EdDSA; and a pair that works, checked once
 * when the method is written. One private operation's CPU is what a forward pays for its method, so a key
 * that makes it seconds long (a huge modulus, or factors that are not primes, which turn off the CRT
 * speed-up) would let one merchant's method stall every forward of the process. No message quotes a key.
 */

const RSA_MIN_BITS = 2048;
const RSA_MAX_BITS = 4096;
/** node:crypto's names of P-256, P-384 and P-521. */
export const EC_CURVES: Readonly<Record<string, string>> = {
  prime256v1: 'P-256',
  secp384r1: 'P-384',
  secp521r1: 'P-521',
};
/**
 * Miller-Rabin rounds with random bases: a composite passes one with probability at most 1/4, whoever
 * chose it, so 32 leave 2^-64; OpenSSL's default (64 to 128) takes a 4,096-bit key's check past 400 ms.
 */
const PRIME_CHECKS = 32;

/** Why a key is refused by its type, size or curve (a phrase after `fields.<name>`), or null. */
export function keyBoundsProblem(key: KeyObject): string | null {
  switch (key.asymmetricKeyType) {
    case 'rsa':
    case 'rsa-pss': {
      const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
      return bits < RSA_MIN_BITS || bits > RSA_MAX_BITS
        ? `must be an RSA key of ${RSA_MIN_BITS} to ${RSA_MAX_BITS} bits (this one has ${bits})`
        : null;
    }
    case 'ec':
      return EC_CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''] === undefined
        ? 'must be an EC key on P-256, P-384 or P-521'
        : null;
    case 'ed25519':
    case 'ed448':
    case 'x25519':
    case 'x448':
      return null;
    default:
      return 'must be an RSA, EC or EdDSA key';
  }
}

/** Bytes of a JWK member as an unsigned integer. */
function integer(member: string | undefined): bigint {
  const hex = Buffer.from(member ?? '', 'base64url').toString('hex');
  return hex ? BigInt(`0x${hex}`) : 0n;
}

/**
 * The RSA key's members. An RSASSA-PSS key (RFC 9421's own test key is one) has no JWK form in
 * node:crypto; its PKCS#8 wraps the same PKCS#1 RSAPrivateKey as a plain RSA key's does, which does.
 */
function rsaMembers(key: KeyObject): JsonWebKey | null {
  try {
    if (key.asymmetricKeyType === 'rsa') return key.export({ format: 'jwk' });
    const info = fromBER(key.export({ type: 'pkcs8', format: 'der' })).result;
    const inner = info instanceof Sequence ? info.valueBlock.value[2] : undefined;
    if (!(inner instanceof OctetString)) return null;
    const pkcs1 = Buffer.from(inner.valueBlock.valueHexView);
    return createPrivateKey({ key: pkcs1, format: 'der', type: 'pkcs1' }).export({ format: 'jwk' });
  } catch {
    return null;
  }
}

const isPrime = (value: bigint) =>
  new Promise<boolean>((resolve, reject) =>
    checkPrime(value, { checks: PRIME_CHECKS }, (error, prime) => (error ? reject(error) : resolve(prime))),
  );

/**
 * Two primes whose product is the modulus, and CRT exponents and coefficient that belong to them: what
 * OpenSSL's signing takes on trust. With anything else its CRT result fails its own check and it signs
 * again without the CRT, several times slower; the signature still verifies, so a round trip cannot tell.
 */
async function rsaFactorsProblem(key: KeyObject): Promise<string | null> {
  const jwk = rsaMembers(key);
  if (!jwk) return 'must be a two-prime RSA key whose members can be read';
  const [n, d, p, q] = [jwk.n, jwk.d, jwk.p, jwk.q].map(integer);
  const [dp, dq, qi] = [jwk.dp, jwk.dq, jwk.qi].map(integer);
  const consistent =
    p > 1n && q > 1n && p * q === n && dp === d % (p - 1n) && dq === d % (q - 1n) && (qi * q) % p === 1n;
  if (!consistent || !(await isPrime(p)) || !(await isPrime(q)))
    return 'is not a consistent RSA key: its factors are not two primes making its modulus, with exponents of its own';
  return null;
}

/** The digest each key type signs with here (RSA-PSS and EdDSA: their own). */
function digestOf(key: KeyObject): string | null {
  return key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'ec' ? 'sha256' : null;
}

/** One signature on libuv's pool (not this thread), verified with the key's own public half. */
function signsAndVerifies(key: KeyObject): Promise<boolean> {
  const data = Buffer.from('vault-forward key pair check');
  return new Promise((resolve) => {
    try {
      sign(digestOf(key), data, key, (error, signature) => {
        if (error) return resolve(false);
        try {
          resolve(verify(digestOf(key), data, createPublicKey(key), signature));
        } catch {
          resolve(false);
        }
      });
    } catch {
      resolve(false);
    }
  });
}

/** Why a key within bounds is not a working pair (a phrase after `fields.<name>`), or null. */
async function keyPairProblem(key: KeyObject): Promise<string | null> {
  if (key.asymmetricKeyType === 'x25519' || key.asymmetricKeyType === 'x448') return null; // key agreement only
  if (key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss') {
    const problem = await rsaFactorsProblem(key);
    if (problem) return problem;
  }
  return (await signsAndVerifies(key))
    ? null
    : 'does not sign what its own public key verifies (a damaged or assembled key)';
}

/** A field's private key as its kind opens it (PEM, or a JWK as JSON), or null when it does not open. */
function openKey(value: string, passphrase: string | undefined): KeyObject | null {
  try {
    if (value.trimStart().startsWith('{'))
      return createPrivateKey({ key: JSON.parse(value) as JsonWebKey, format: 'jwk' });
    return createPrivateKey(passphrase === undefined ? value : { key: value, passphrase });
  } catch {
    return null;
  }
}

/** Why a stored key that opens is out of bounds (a method written before them), or null: for the steps of a forward. */
export function openedKeyBoundsProblem(value: string, passphrase: string | undefined): string | null {
  const key = openKey(value, passphrase);
  return key ? keyBoundsProblem(key) : null;
}

/**
 * Every private key of a method's fields out of bounds or not a working pair, as field errors (400 when the
 * method is written). A key that does not open stays what it was: a warning (decision 0050).
 */
export async function privateKeyErrors(
  kind: AuthenticationKind,
  fields: Readonly<Record<string, string>>,
): Promise<ProblemFieldError[]> {
  const errors: ProblemFieldError[] = [];
  for (const field of KINDS[kind].fields) {
    const value = fields[field.name];
    if (value === undefined || (field.format !== 'pem-private-key' && field.format !== 'private-key')) continue;
    const key = openKey(value, fields.passphrase);
    if (!key) continue;
    const problem = keyBoundsProblem(key) ?? (await keyPairProblem(key));
    if (problem) errors.push({ location: 'body', name: `fields.${field.name}`, message: problem });
  }
  return errors;
}
