import { generateKeyPairSync } from 'node:crypto';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { keyFromCompositeFactors, oversizedKeyFromNonPrimes } from '../support/crafted-rsa-keys';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { TestCa } from '../support/test-pki';

/**
 * Issue 47 item 3: a private key is bounded where a method takes it (decision 0144). Each refusal is a 400
 * `validation-failed` naming the field, with no part of the key in the answer, and nothing is stored.
 */
describe('authentication methods refuse keys that could stall a process', () => {
  let t: TestApp;
  let token: string;
  let configId: string;
  const client = TestCa.create('Key bounds CA').issue('client-one', 'client');
  const keyLine = (pem: string) => pem.split('\n')[1];

  beforeAll(async () => {
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    const merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    const config = { display_name: 'Signed', hosts: ['127.0.0.1:9'] };
    configId = (await http(t.url, '/vault-forward/configs', { method: 'POST', token, body: config })).body.id;
  });

  afterAll(async () => {
    await t.close();
  });

  const create = (kind: string, fields: Record<string, string>) =>
    http(t.url, `/vault-forward/configs/${configId}/authentications`, {
      method: 'POST',
      token,
      body: { kind, label: kind, fields },
    });

  async function refused(kind: string, fields: Record<string, string>, field: string, message: string | RegExp) {
    const before = (await http(t.url, `/vault-forward/configs/${configId}/authentications`, { token })).body.items;
    const result = await create(kind, fields);
    const problem = expectProblem(result, 400, 'validation-failed');
    expect(problem.errors).toEqual([{ location: 'body', name: field, message: expect.stringMatching(message) }]);
    for (const value of Object.values(fields))
      if (value.includes('-----')) expect(result.text).not.toContain(keyLine(value));
    const after = (await http(t.url, `/vault-forward/configs/${configId}/authentications`, { token })).body.items;
    expect(after).toHaveLength(before.length);
  }

  it('the finding: a 16,384-bit key from non-prime factors, for oauth1-rsa and RFC 9421 (a 2,048-bit one is taken)', async () => {
    const huge = oversizedKeyFromNonPrimes(16384);
    const size = /^must be an RSA key of 2048 to 4096 bits \(this one has 16384\)$/;
    await refused('oauth1-rsa', { consumer_key: 'ck', private_key: huge }, 'fields.private_key', size);
    await refused(
      'http-message-signature',
      { key_id: 'k', algorithm: 'rsa-pss-sha512', private_key: huge },
      'fields.private_key',
      size,
    );
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const pem = rsa.export({ type: 'pkcs8', format: 'pem' }) as string;
    expect((await create('oauth1-rsa', { consumer_key: 'ck', private_key: pem })).status).toBe(201);
  });

  it('a 2,048-bit key whose factors are not primes (its signatures verify, slowly) is refused', async () => {
    await refused(
      'oauth1-rsa',
      { consumer_key: 'ck', private_key: keyFromCompositeFactors() },
      'fields.private_key',
      /not a consistent RSA key/,
    );
  });

  it('a mutual-tls client key off the three NIST curves (a P-256 one is taken), and a 6,144-bit response key, are refused', async () => {
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey;
    await refused(
      'mutual-tls',
      { certificate: client.cert, private_key: k1.export({ type: 'pkcs8', format: 'pem' }) as string },
      'fields.private_key',
      /^must be an EC key on P-256, P-384 or P-521$/,
    );
    const tls = await create('mutual-tls', { certificate: client.cert, private_key: client.key });
    // The test CA's certificates last two days: only that is warned about.
    expect(tls.status).toBe(201);
    expect(tls.body.warnings.map((w: { code: string }) => w.code)).toEqual(['certificate-expires-soon']);
    const recipient = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    await refused(
      'jwe-payload',
      {
        public_key: recipient.export({ type: 'spki', format: 'pem' }) as string,
        algorithm: 'ECDH-ES+A256KW',
        encryption: 'A256GCM',
        response_private_key: oversizedKeyFromNonPrimes(6144),
      },
      'fields.response_private_key',
      /this one has 6144/,
    );
  });

  it('RFC 9421 components of headers only, which could sign sig1=(), are refused', async () => {
    await refused(
      'http-message-signature',
      { key_id: 'k', algorithm: 'hmac-sha256', secret: 'a2V5', components: 'content-type x-request-id' },
      'fields.components',
      /must name a derived component/,
    );
  });
});
