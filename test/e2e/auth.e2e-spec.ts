import { createHmac, generateKeyPairSync, randomUUID } from 'node:crypto';
import { SignJWT, exportJWK } from 'jose';
import { TokenVerifier } from '../../src/modules/merchants/auth/token-verifier.service';
import { createApiKey, TestKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectProblem, http } from '../support/http';
import { ProbeModule } from '../support/probe.module';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

const b64url = (value: object | string) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('Authentication and authorisation (API keys, JWT bearer tokens, scopes)', () => {
  let t: TestApp;
  let merchantA: string;
  let merchantB: string;
  let instanceKey: TestKey;
  let merchantKey: TestKey;

  beforeAll(async () => {
    t = await startTestApp({ imports: [ProbeModule] });
    merchantA = (await createMerchantAccount(t)).id;
    merchantB = (await createMerchantAccount(t)).id;
    instanceKey = await createApiKey(t, null);
    merchantKey = await createApiKey(t, merchantA);
  });
  afterAll(() => t.close());

  const now = () => Math.floor(Date.now() / 1000);

  function claims(overrides: Record<string, unknown> = {}) {
    const iat = now();
    return { iat, nbf: iat, exp: iat + 300, jti: randomUUID(), scopes: ['*.read', '*.write'], ...overrides };
  }

  async function signWith(key: TestKey, payload: Record<string, unknown>, header: Record<string, unknown> = {}) {
    const { createPrivateKey } = await import('node:crypto');
    return new SignJWT(payload)
      .setProtectedHeader({ alg: key.algorithm, kid: key.id, typ: 'JWT', ...header })
      .sign(createPrivateKey(key.privateKeyPem));
  }

  const probe = (token: string, headers: Record<string, string> = {}) =>
    http(t.url, '/__probe/merchant', { token, headers });

  describe('valid tokens', () => {
    it('accepts an ES512 token minted for a merchant key and acts for that merchant', async () => {
      const result = await probe(await merchantKey.token());
      expect(result.status).toBe(200);
      expect(result.body).toEqual({ merchant_account_id: merchantA, key_id: merchantKey.id });
    });

    it('accepts ES256 keys as well', async () => {
      const key = await createApiKey(t, merchantB, 'ES256');
      const result = await probe(await key.token(['buyers.read']));
      expect(result.status).toBe(200);
      expect(result.body.merchant_account_id).toBe(merchantB);
    });

    it('uses the RFC 7638 thumbprint of the public key as key id', async () => {
      const { calculateJwkThumbprint } = await import('jose');
      const { createPublicKey } = await import('node:crypto');
      const jwk = await exportJWK(createPublicKey(merchantKey.privateKeyPem));
      expect(merchantKey.id).toBe(await calculateJwkThumbprint(jwk, 'sha256'));
    });

    it('verifies a reused token only once (cached until exp)', async () => {
      const verifier = t.get(TokenVerifier);
      const token = await merchantKey.token(['buyers.read']);
      const before = verifier.verifications;
      for (let i = 0; i < 3; i++) expect((await probe(token)).status).toBe(200);
      expect(verifier.verifications - before).toBe(1);
    });
  });

  describe('refused tokens (401 problem+json naming the authorization header)', () => {
    async function expectUnauthorized(token: string | undefined, detail: RegExp, headers: Record<string, string> = {}) {
      const result = await http(t.url, '/__probe/merchant', { token, headers });
      const problem = expectProblem(result, 401, 'unauthorized');
      expect(problem.detail).toMatch(detail);
      expect(problem.errors).toEqual([expect.objectContaining({ location: 'header', name: 'authorization' })]);
      expect(result.headers.get('www-authenticate')).toBe('Bearer');
    }

    it('no Authorization header', () => expectUnauthorized(undefined, /missing/i));
    it('not a Bearer header', () => expectUnauthorized(undefined, /Bearer/, { authorization: 'Basic dXNlcjpwYXNz' }));
    it('garbage token', () => expectUnauthorized('not-a-jwt', /not a JWT/));

    it('expired token', async () => {
      const iat = now() - 7200;
      await expectUnauthorized(await signWith(merchantKey, claims({ iat, nbf: iat, exp: iat + 3600 })), /expired/);
    });

    it('token not valid yet (nbf in the future)', async () => {
      await expectUnauthorized(
        await signWith(merchantKey, claims({ nbf: now() + 600, exp: now() + 900 })),
        /not valid yet/,
      );
    });

    // jose checks iat only when maxTokenAge is set, so this check of ours is the only guard.
    it('token issued in the future (iat beyond the clock tolerance), even with nbf and exp in order', async () => {
      await expectUnauthorized(
        await signWith(merchantKey, claims({ iat: now() + 60, nbf: now(), exp: now() + 300 })),
        /issued in the future \("iat"\)/,
      );
      await expectUnauthorized(
        await signWith(merchantKey, claims({ iat: now() + 3000, nbf: now(), exp: now() + 3300 })),
        /issued in the future/,
      );
    });

    it('an iat a little ahead, within the clock tolerance, is accepted', async () => {
      expect(
        (await probe(await signWith(merchantKey, claims({ iat: now() + 2, nbf: now(), exp: now() + 300 })))).status,
      ).toBe(200);
    });

    it('token living exactly one hour is accepted', async () => {
      const iat = now();
      expect((await probe(await signWith(merchantKey, claims({ iat, nbf: iat, exp: iat + 3600 })))).status).toBe(200);
    });

    it('token living longer than one hour', async () => {
      await expectUnauthorized(await signWith(merchantKey, claims({ exp: now() + 3601 })), /at most 3600/);
    });

    it('token without jti', async () => {
      const { jti: _jti, ...rest } = claims();
      await expectUnauthorized(await signWith(merchantKey, rest), /"jti"/);
    });

    it.each(['nbf', 'iat', 'exp'])(
      'token without %s names that claim as missing (not "not valid yet" or "expired")',
      async (claim) => {
        const { [claim]: _dropped, ...rest } = claims() as Record<string, unknown>;
        const result = await http(t.url, '/__probe/merchant', { token: await signWith(merchantKey, rest) });
        const problem = expectProblem(result, 401, 'unauthorized');
        expect(problem.detail).toContain(`The token has no "${claim}" claim`);
        expect(problem.detail).not.toMatch(/not valid yet|expired/);
      },
    );

    it('token without scopes', async () => {
      const { scopes: _scopes, ...rest } = claims();
      await expectUnauthorized(await signWith(merchantKey, rest), /scopes/);
    });

    it('wrong signature: signed by another key under this key id', async () => {
      const other = generateKeyPairSync('ec', { namedCurve: 'secp521r1' });
      const token = await new SignJWT(claims())
        .setProtectedHeader({ alg: 'ES512', kid: merchantKey.id })
        .sign(other.privateKey);
      await expectUnauthorized(token, /signature/);
    });

    it('tampered payload (scopes widened after signing)', async () => {
      const token = await merchantKey.token(['buyers.read']);
      const [header, , signature] = token.split('.');
      const forged = `${header}.${b64url(claims({ scopes: ['*.write', '*.read'] }))}.${signature}`;
      await expectUnauthorized(forged, /signature/);
    });

    it('unknown kid', async () => {
      await expectUnauthorized(await signWith(merchantKey, claims(), { kid: 'no-such-key' }), /does not exist/);
    });

    it('alg: none', async () => {
      const token = `${b64url({ alg: 'none', kid: merchantKey.id, typ: 'JWT' })}.${b64url(claims())}.`;
      await expectUnauthorized(token, /"none" is not accepted/);
    });

    it('HS256 signed with the public key as HMAC secret (algorithm confusion)', async () => {
      const { createPublicKey } = await import('node:crypto');
      const publicPem = createPublicKey(merchantKey.privateKeyPem).export({ type: 'spki', format: 'pem' }).toString();
      const publicJwk = JSON.stringify(await exportJWK(createPublicKey(merchantKey.privateKeyPem)));
      for (const secret of [publicPem, publicJwk]) {
        const signingInput = `${b64url({ alg: 'HS256', kid: merchantKey.id, typ: 'JWT' })}.${b64url(claims())}`;
        const signature = createHmac('sha256', secret).update(signingInput).digest('base64url');
        await expectUnauthorized(`${signingInput}.${signature}`, /"HS256" is not accepted/);
      }
    });

    it('algorithm that does not match the key (ES256 header on an ES512 key)', async () => {
      const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      const token = await new SignJWT(claims())
        .setProtectedHeader({ alg: 'ES256', kid: merchantKey.id })
        .sign(p256.privateKey);
      await expectUnauthorized(token, /signs with ES512/);
    });

    it('revoked key', async () => {
      const key = await createApiKey(t, merchantA);
      await t.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
      await expectUnauthorized(await key.token(), /revoked/);
    });
  });

  describe('scopes (403)', () => {
    it('refuses a valid token that lacks the route scope', async () => {
      const result = await probe(await merchantKey.token(['buyers.write', 'payment-methods.read']));
      const problem = expectProblem(result, 403, 'forbidden');
      expect(problem.detail).toContain('buyers.read');
    });

    it('accepts the *.read wildcard for a .read scope but not *.write', async () => {
      expect((await probe(await merchantKey.token(['*.read']))).status).toBe(200);
      expectProblem(await probe(await merchantKey.token(['*.write'])), 403, 'forbidden');
    });

    it('refuses merchant-bound keys on instance routes', async () => {
      const result = await http(t.url, `/merchant-accounts/${merchantA}`, { token: await merchantKey.token() });
      expectProblem(result, 403, 'instance-key-required');
    });
  });

  describe('merchant account of the request', () => {
    it('a merchant key may name its own merchant, with either header', async () => {
      const token = await merchantKey.token();
      expect((await probe(token, { 'x-merchant-account-id': merchantA })).body.merchant_account_id).toBe(merchantA);
      expect((await probe(token, { 'x-gr4vy-merchant-account-id': merchantA })).body.merchant_account_id).toBe(
        merchantA,
      );
    });

    it('a merchant key naming another merchant gets 403, with either header', async () => {
      const token = await merchantKey.token();
      for (const header of ['x-merchant-account-id', 'x-gr4vy-merchant-account-id']) {
        const problem = expectProblem(await probe(token, { [header]: merchantB }), 403, 'merchant-account-mismatch');
        expect(problem.errors[0]).toMatchObject({ location: 'header', name: header });
      }
    });

    it('an instance key acts for the merchant it names', async () => {
      const token = await instanceKey.token();
      expect((await probe(token, { 'x-merchant-account-id': merchantB })).body.merchant_account_id).toBe(merchantB);
      expect((await probe(token, { 'x-gr4vy-merchant-account-id': merchantA })).body.merchant_account_id).toBe(
        merchantA,
      );
    });

    it('an instance key naming an unknown merchant gets 400 naming the header', async () => {
      const problem = expectProblem(
        await probe(await instanceKey.token(), { 'x-merchant-account-id': 'no-such-merchant' }),
        400,
        'merchant-account-unknown',
      );
      expect(problem.errors[0]).toMatchObject({ location: 'header', name: 'x-merchant-account-id' });
    });

    it('an instance key naming a malformed merchant id gets 400', async () => {
      expectProblem(
        await probe(await instanceKey.token(), { 'x-merchant-account-id': 'Not A Slug' }),
        400,
        'validation-failed',
      );
    });

    it('an instance key naming no merchant acts for "default"', async () => {
      await t.db.query(
        `INSERT INTO merchant_accounts (id, display_name) VALUES ('default', 'Default') ON CONFLICT DO NOTHING`,
      );
      expect((await probe(await instanceKey.token())).body.merchant_account_id).toBe('default');
    });
  });

  describe('logs', () => {
    // nestjs-pino's middleware route decides which requests get a line: its default matched none under
    // NestJS 12's fastify adapter, and `*path` matches every path but `/`.
    it.each(['/', '/health/live', '/no-such-route', '/buyers'])(
      'a request to %s has its request log line',
      async (path) => {
        const requestId = `test-${randomUUID()}`;
        await fetch(`${t.url}${path}`, { headers: { 'x-request-id': requestId } });
        const line = await waitFor(() => t.logs.requestLine(requestId), { what: `the log line of ${path}` });
        expect(line.req.url).toBe(path);
      },
    );

    it('never contain the bearer token or forwarded credentials', async () => {
      const token = await merchantKey.token();
      const secret = `Bearer downstream-secret-${randomUUID()}`;
      const result = await probe(token, {
        'x-vault-forward-header-authorization': secret,
        'x-request-id': `test-${randomUUID()}`,
      });
      expect(result.status).toBe(200);
      const requestId = result.headers.get('x-request-id')!;
      expect(requestId).toMatch(/^test-/);
      const line = await waitFor(() => t.logs.requestLine(requestId), { what: 'the request log line' });
      expect(line.req.headers.authorization).toBe('[Redacted]');
      expect(line.req.headers['x-vault-forward-header-authorization']).toBe('[Redacted]');
      expect(t.logs.text).not.toContain(token);
      expect(t.logs.text).not.toContain(token.split('.')[2]);
      expect(t.logs.text).not.toContain(secret);
    });
  });
});
