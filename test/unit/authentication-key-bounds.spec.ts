import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign, verify } from 'node:crypto';
import { privateKeyErrors } from '../../src/modules/forwarding-setup/authentication-kinds/private-keys';
import { fieldErrors } from '../../src/modules/forwarding-setup/authentication-kinds/method-fields';
import { AuthenticationSteps } from '../../src/modules/forwarding/sending/authentication-steps';
import type { OutboundRequest } from '../../src/modules/forwarding/sending/outbound-request';
import { ProblemException } from '../../src/platform/problem/problem';
import { keyFromCompositeFactors, keyWithWrongExponent, oversizedKeyFromNonPrimes } from '../support/crafted-rsa-keys';

/** Keys are bounded where they are accepted (decision 0144): when a method is written, and when a forward uses one. */

const pkcs8 = (key: import('node:crypto').KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }) as string;
const keyBody = (pem: string) => pem.split('\n')[1];

describe('private keys of a method, when it is written', () => {
  it('a 16,384-bit RSA key from non-prime factors (the finding) is refused by its size for oauth1-rsa and RFC 9421', async () => {
    const huge = oversizedKeyFromNonPrimes(16384);
    expect(createPrivateKey(huge).asymmetricKeyDetails?.modulusLength).toBe(16384);
    const oauth = await privateKeyErrors('oauth1-rsa', { consumer_key: 'ck', private_key: huge });
    const rfc9421 = await privateKeyErrors('http-message-signature', {
      key_id: 'k',
      algorithm: 'rsa-pss-sha512',
      private_key: huge,
    });
    for (const errors of [oauth, rfc9421]) {
      expect(errors).toEqual([
        {
          location: 'body',
          name: 'fields.private_key',
          message: 'must be an RSA key of 2048 to 4096 bits (this one has 16384)',
        },
      ]);
    }
  });

  it('a mutual-tls client key and a response key past 4,096 bits are refused too', async () => {
    const big = oversizedKeyFromNonPrimes(6144);
    const tls = await privateKeyErrors('mutual-tls', { certificate: 'ignored here', private_key: big });
    expect(tls.map((e) => [e.name, e.message])).toEqual([
      ['fields.private_key', 'must be an RSA key of 2048 to 4096 bits (this one has 6144)'],
    ]);
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwe = {
      public_key: publicKey.export({ type: 'spki', format: 'pem' }) as string,
      algorithm: 'ECDH-ES+A256KW',
      encryption: 'A256GCM',
      response_private_key: big,
    };
    expect(fieldErrors('jwe-payload', jwe).map((e) => [e.name, e.message])).toEqual([
      ['fields.response_private_key', 'must be an RSA key of 2048 to 4096 bits (this one has 6144)'],
    ]);
  });

  it('an EC key on another curve than P-256, P-384 or P-521 is refused', async () => {
    const k1 = pkcs8(generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey);
    const errors = await privateKeyErrors('mutual-tls', { certificate: 'ignored here', private_key: k1 });
    expect(errors.map((e) => [e.name, e.message])).toEqual([
      ['fields.private_key', 'must be an EC key on P-256, P-384 or P-521'],
    ]);
  });

  it('factors that are not primes: a sign-and-verify round trip passes, the key is refused all the same', async () => {
    const pem = keyFromCompositeFactors();
    const key = createPrivateKey(pem);
    const data = Buffer.from('a base string');
    expect(verify('sha256', data, createPublicKey(key), sign('sha256', data, key))).toBe(true);
    const errors = await privateKeyErrors('oauth1-rsa', { consumer_key: 'ck', private_key: pem });
    expect(errors.map((e) => e.name)).toEqual(['fields.private_key']);
    expect(errors[0].message).toContain('not a consistent RSA key');
    expect(JSON.stringify(errors)).not.toContain(keyBody(pem));
  });

  it('two primes but an exponent of no use: nothing it signs verifies, so the pair is refused; working keys pass', async () => {
    const errors = await privateKeyErrors('http-message-signature', {
      key_id: 'k',
      algorithm: 'rsa-pss-sha512',
      private_key: keyWithWrongExponent(),
    });
    expect(errors.map((e) => [e.name, e.message])).toEqual([
      ['fields.private_key', 'does not sign what its own public key verifies (a damaged or assembled key)'],
    ]);
    // Keys that work pass: RSA, RSASSA-PSS (the type of RFC 9421's own test key), P-256, Ed25519.
    const keys = {
      rsa: pkcs8(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey),
      pss: pkcs8(generateKeyPairSync('rsa-pss', { modulusLength: 2048, hashAlgorithm: 'sha512' }).privateKey),
      p256: pkcs8(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey),
      ed25519: pkcs8(generateKeyPairSync('ed25519').privateKey),
    };
    expect(createPrivateKey(keys.pss).asymmetricKeyType).toBe('rsa-pss');
    expect(await privateKeyErrors('oauth1-rsa', { consumer_key: 'ck', private_key: keys.rsa })).toEqual([]);
    for (const [algorithm, pem] of [
      ['rsa-pss-sha512', keys.pss],
      ['ecdsa-p256-sha256', keys.p256],
      ['ed25519', keys.ed25519],
    ])
      expect(await privateKeyErrors('http-message-signature', { key_id: 'k', algorithm, private_key: pem })).toEqual(
        [],
      );
  });
});

describe('RFC 9421 components', () => {
  const fields = (components: string) => ({ key_id: 'k', algorithm: 'hmac-sha256', secret: 'a2V5', components });

  it('a list of headers only (each one a request may lack) is refused: it could sign sig1=()', () => {
    expect(fieldErrors('http-message-signature', fields('content-type x-request-id'))).toEqual([
      {
        location: 'body',
        name: 'fields.components',
        message: expect.stringContaining('must name a derived component (such as @method) or content-digest'),
      },
    ]);
    expect(fieldErrors('http-message-signature', fields('x-request-id @path'))).toEqual([]);
    expect(fieldErrors('http-message-signature', fields('content-digest'))).toEqual([]);
  });
});

describe('a method stored before the bounds, at forward time', () => {
  const steps = new AuthenticationSteps();
  const outbound: OutboundRequest = {
    url: new URL('https://example.com/pay'),
    method: 'GET',
    headers: {},
    body: undefined,
    timeoutMs: 30_000,
    trusted: false,
    identity: null,
  };
  const stored = (kind: 'oauth1-rsa' | 'http-message-signature', fields: Record<string, string>) => ({
    id: randomUUID(),
    configId: randomUUID(),
    kind,
    version: '1',
    fields,
  });
  const refusal = async (method: ReturnType<typeof stored>) => {
    const error: unknown = await steps.apply(outbound, [method]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProblemException);
    const problem = error as ProblemException;
    expect([problem.definition.status, problem.definition.code]).toEqual([422, 'authentication-method-invalid']);
    return problem.detail;
  };

  it('a key past 4,096 bits is 422 authentication-method-invalid, nothing signed', async () => {
    const pem = oversizedKeyFromNonPrimes(6144);
    const detail = await refusal(stored('oauth1-rsa', { consumer_key: 'ck', private_key: pem }));
    expect(detail).toContain('its private_key must be an RSA key of 2048 to 4096 bits (this one has 6144)');
    expect(detail).not.toContain(keyBody(pem));
  });

  it('components of headers only that this request lacks are 422, not sig1=()', async () => {
    const detail = await refusal(
      stored('http-message-signature', { key_id: 'k', algorithm: 'hmac-sha256', secret: 'a2V5', components: 'x-a' }),
    );
    expect(detail).toContain('its components must name a derived component');
  });
});
