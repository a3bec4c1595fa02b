import { createPrivateKey, generatePrimeSync, randomBytes } from 'node:crypto';

/**
 * RSA private keys assembled from chosen integers, as a hostile caller would paste them: node:crypto (and
 * OpenSSL under it) imports a JWK without checking that its members belong together. Cheap at any size,
 * where generating a real key of 8,192 bits or more takes seconds. Each is returned as PKCS#8 PEM.
 */

const E = 65537n;

function base64url(value: bigint): string {
  const hex = value.toString(16);
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex').toString('base64url');
}

function bitLength(value: bigint): number {
  return value.toString(2).length;
}

/** a⁻¹ mod m by the extended Euclidean algorithm, or null when they share a factor. */
function inverse(a: bigint, m: bigint): bigint | null {
  let [r0, r1, s0, s1] = [((a % m) + m) % m, m, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1, s0, s1] = [r1, r0 - q * r1, s1, s0 - q * s1];
  }
  return r0 === 1n ? ((s0 % m) + m) % m : null;
}

const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));
const lcm = (a: bigint, b: bigint) => (a / gcd(a, b)) * b;
const prime = (bits: number) => generatePrimeSync(bits, { bigint: true });

/** Odd, of exactly `bits`, its top two bits set: the product of two has twice the bits. */
function randomOdd(bits: number): bigint {
  const bytes = randomBytes(Math.ceil(bits / 8));
  const value = BigInt(`0x${bytes.toString('hex')}`) >> BigInt(bytes.length * 8 - bits);
  return value | (3n << BigInt(bits - 2)) | 1n;
}

/** The members as a JWK, with CRT exponents and coefficient derived from `d`, `p` and `q`, as PKCS#8 PEM. */
function pem(n: bigint, d: bigint, p: bigint, q: bigint): string {
  const jwk = {
    kty: 'RSA',
    n: base64url(n),
    e: base64url(E),
    d: base64url(d),
    p: base64url(p),
    q: base64url(q),
    dp: base64url(d % (p - 1n)),
    dq: base64url(d % (q - 1n)),
    qi: base64url(inverse(q, p) ?? 1n),
  };
  return createPrivateKey({ key: jwk, format: 'jwk' }).export({ type: 'pkcs8', format: 'pem' }) as string;
}

/** The finding's key: a modulus of `bits` from two random odd numbers (not primes) and a random exponent. */
export function oversizedKeyFromNonPrimes(bits: number): string {
  const p = randomOdd(bits / 2);
  const q = randomOdd(bits / 2);
  return pem(p * q, randomOdd(bits - 8), p, q);
}

/**
 * A 2,048-bit key whose two "primes" are each a product of two primes, its exponent the inverse of e for
 * the real four: it signs what its public key verifies (OpenSSL's CRT result fails its own check and it
 * signs again without the CRT, several times slower), so a sign-and-verify round trip passes.
 */
export function keyFromCompositeFactors(): string {
  for (;;) {
    const [p1, p2, q1, q2] = [prime(512), prime(512), prime(512), prime(512)];
    const [p, q] = [p1 * p2, q1 * q2];
    const d = inverse(E, [p1, p2, q1, q2].map((f) => f - 1n).reduce(lcm));
    if (d !== null && bitLength(p * q) === 2048 && gcd(p, q) === 1n) return pem(p * q, d, p, q);
  }
}

/** Two real primes and their modulus, but an exponent that is not the inverse of e: nothing it signs verifies. */
export function keyWithWrongExponent(): string {
  for (;;) {
    const [p, q] = [prime(1024), prime(1024)];
    if (bitLength(p * q) === 2048 && p !== q) return pem(p * q, randomOdd(2040), p, q);
  }
}
