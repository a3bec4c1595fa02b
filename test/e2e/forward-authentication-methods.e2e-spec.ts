import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { createApiKey } from '../factories/api-keys';
import { cardNumber, createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectProblem, http, HttpResult } from '../support/http';
import { decryptRsaOaepA256Gcm, hmac } from '../support/independent-crypto';
import { testTempDir } from '../support/temp-data-dir';
import { startTestApp, TestApp } from '../support/test-app';
import { TestCa } from '../support/test-pki';
import { waitFor } from '../support/wait';

/** An HTTPS downstream that requires a client certificate from `clientCa`, and counts its TLS handshakes. */
interface MtlsDownstream {
  url: string;
  port: number;
  received: Array<{ url: string; clientCn: string | undefined; body: Buffer }>;
  handshakes: number;
  close(): Promise<void>;
}

function startMtlsDownstream(server: { cert: string; key: string }, clientCa: string): Promise<MtlsDownstream> {
  const https: Server = createHttpsServer({
    cert: server.cert,
    key: server.key,
    ca: clientCa,
    requestCert: true,
    rejectUnauthorized: true,
  });
  const state: MtlsDownstream = { url: '', port: 0, received: [], handshakes: 0, close: async () => undefined };
  https.on('secureConnection', () => state.handshakes++);
  https.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      state.received.push({
        url: req.url!,
        clientCn: peer?.subject?.CN as string | undefined,
        body: Buffer.concat(chunks),
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, client: peer?.subject?.CN }));
    });
  });
  return new Promise((resolve) => {
    https.listen(0, '127.0.0.1', () => {
      state.port = (https.address() as AddressInfo).port;
      state.url = `https://127.0.0.1:${state.port}`;
      state.close = () =>
        new Promise<void>((r) => {
          https.closeAllConnections();
          https.close(() => r());
        });
      resolve(state);
    });
  });
}

describe('x-vault-forward-authentications against real downstreams, checked independently', () => {
  let t: TestApp;
  let plain: Downstream;
  let mtls: MtlsDownstream;
  let merchant: string;
  let token: string;
  let configId: string;
  let otherConfigId: string;
  let card: { id: string; number: string };
  const ca = TestCa.create('Downstream CA');
  const otherCa = TestCa.create('Other CA');
  const client = ca.issue('client-one', 'client');
  const client2 = ca.issue('client-two', 'client');
  const foreignClient = otherCa.issue('client-foreign', 'client');
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rsaPublicPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;
  /** Every secret given to the service in this file, to look for in its logs. */
  const secrets: string[] = [client.key, client2.key, foreignClient.key];

  beforeAll(async () => {
    const serverCert = ca.issue('127.0.0.1', 'server');
    const caFile = join(testTempDir('vf-auth-ca-'), 'ca.pem');
    writeFileSync(caFile, ca.cert);
    [plain, mtls] = await Promise.all([startHttpDownstream(), startMtlsDownstream(serverCert, ca.cert)]);
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1', FORWARD_EXTRA_CA_FILE: caFile } });
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    const hosts = [`127.0.0.1:${plain.port}`, `127.0.0.1:${mtls.port}`];
    configId = (
      await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'Signed downstreams', hosts },
      })
    ).body.id;
    // The same hosts, but only for PUT: a method of this config never serves the POSTs below.
    otherConfigId = (
      await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'Other', hosts, methods: ['PUT'] },
      })
    ).body.id;
    const number = cardNumber('4', 16);
    card = { id: (await createCard(t, merchant, { number, expiration_date: '04/31' })).id, number };
  });

  afterAll(async () => {
    await t.close();
    await Promise.all([plain.close(), mtls.close()]);
  });
  // After each test, not in a last test of its own: a test run alone (-t) or in another order checks
  // the logs it wrote against the secrets it gave the service.
  afterEach(() => {
    const text = t.logs.text;
    expect(text.length).toBeGreaterThan(0);
    for (const secret of secrets)
      expect(text).not.toContain(secret.split('\n').find((l) => l.length > 20 && !l.startsWith('-----')) ?? secret);
    expect(text).not.toContain(card.number);
  });

  async function createMethod(
    kind: string,
    fields: Record<string, string>,
    options: { config?: string; token?: string } = {},
  ) {
    const result = await http(t.url, `/vault-forward/configs/${options.config ?? configId}/authentications`, {
      method: 'POST',
      token: options.token ?? token,
      body: { kind, label: `${kind} for tests`, fields },
    });
    expect(result.status).toBe(201);
    return result.body as { id: string; warnings: unknown[] };
  }

  function forward(
    url: string,
    ids: string[],
    body = '{"n":"{{ CARD_NUMBER_1 }}"}',
    extra: Record<string, string> = {},
  ) {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': url,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card.id,
        ...(ids.length ? { 'x-vault-forward-authentications': ids.join(',') } : {}),
        'content-type': 'application/json',
        ...extra,
      },
      rawBody: body,
    });
  }

  function expectOurs(result: HttpResult, status: number, code: string) {
    const problem = expectProblem(result, status, code);
    expect(result.headers.get('x-vault-forward-error')).toBe('true');
    return problem;
  }

  describe('hmac-signature', () => {
    it('signs the filled body with the secret as entered, trailing newline included (and the create answer warns)', async () => {
      const secret = 'whsec_9f8e7d6c5b4a\n';
      secrets.push(secret.trim());
      const created = await createMethod('hmac-signature', {
        secret,
        algorithm: 'sha256',
        encoding: 'hex',
        header: 'X-Signature',
        timestamp_header: 'X-Timestamp',
        prefix: 'v1=',
      });
      expect(created.warnings.length).toBeGreaterThan(0);
      const before = plain.received.length;
      const result = await forward(`${plain.url}/charge`, [created.id]);
      expect(result.status).toBe(200);
      const got = plain.received[before];
      expect(got.body.toString()).toBe(`{"n":"${card.number}"}`);
      const timestamp = String(got.headers['x-timestamp']);
      expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
      expect(got.headers['x-signature']).toBe(`v1=${hmac('sha256', secret, [`${timestamp}.`, got.body], 'hex')}`);
      // Not the trimmed secret: values are used as entered.
      expect(got.headers['x-signature']).not.toBe(
        `v1=${hmac('sha256', secret.trim(), [`${timestamp}.`, got.body], 'hex')}`,
      );

      const record = await waitFor(
        async () => {
          const found = await http(
            t.url,
            `/vault-forward/requests/${result.headers.get('x-vault-forward-request-id')}`,
            { token },
          );
          return found.status === 200 && found;
        },
        { what: 'the forward record' },
      );
      expect(record.body.authentication_ids).toEqual([created.id]);
      expect(record.text).not.toContain('whsec_');
    });
  });

  describe('jwe-payload', () => {
    it('replaces the filled body with a JWE the downstream decrypts with its private key; alg/enc/kid/cty as configured', async () => {
      const created = await createMethod('jwe-payload', {
        public_key: rsaPublicPem,
        key_id: 'downstream-key-7',
        algorithm: 'RSA-OAEP-256',
        encryption: 'A256GCM',
        content_type: 'application/json',
      });
      const before = plain.received.length;
      expect((await forward(`${plain.url}/charge`, [created.id])).status).toBe(200);
      const got = plain.received[before];
      expect(got.headers['content-type']).toBe('application/jose');
      const { header, plaintext } = decryptRsaOaepA256Gcm(got.body.toString('ascii'), rsa.privateKey);
      expect(header).toEqual({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: 'downstream-key-7', cty: 'application/json' });
      expect(plaintext.toString()).toBe(`{"n":"${card.number}"}`);
      expect(got.body.toString()).not.toContain(card.number);
    });

    it('encrypts a body that is not JSON (XML, a form) byte for byte, as filled', async () => {
      const created = await createMethod('jwe-payload', {
        public_key: rsaPublicPem,
        algorithm: 'RSA-OAEP-256',
        encryption: 'A256GCM',
      });
      for (const [contentType, body, filled] of [
        [
          'application/xml',
          '<pay><n>{{ CARD_NUMBER_1 }}</n><e>{{ CARD_EXPIRATION_DATE_1 }}</e></pay>',
          `<pay><n>${card.number}</n><e>04/31</e></pay>`,
        ],
        [
          'application/x-www-form-urlencoded',
          'number={{ CARD_NUMBER_1 }}&amount=10%2E00',
          `number=${card.number}&amount=10%2E00`,
        ],
      ]) {
        const before = plain.received.length;
        expect((await forward(`${plain.url}/charge`, [created.id], body, { 'content-type': contentType })).status).toBe(
          200,
        );
        const got = plain.received[before];
        expect(got.headers['content-type']).toBe('application/jose');
        expect(got.body.toString()).not.toContain(card.number);
        expect(decryptRsaOaepA256Gcm(got.body.toString('ascii'), rsa.privateKey).plaintext.toString()).toBe(filled);
      }
    });

    it('encrypt-then-sign: the signature covers the JWE as sent; sign-then-encrypt: it covers the plaintext', async () => {
      const jwe = await createMethod('jwe-payload', {
        public_key: rsaPublicPem,
        algorithm: 'RSA-OAEP-256',
        encryption: 'A256GCM',
      });
      const secret = 'ets-secret-0123456789';
      secrets.push(secret);
      const sig = await createMethod('hmac-signature', {
        secret,
        algorithm: 'sha512',
        encoding: 'base64',
        header: 'X-Sig',
        template: '{method} {path}|{body}',
      });

      let before = plain.received.length;
      expect((await forward(`${plain.url}/charge?a=1`, [jwe.id, sig.id])).status).toBe(200);
      let got = plain.received[before];
      // Verified in the downstream's order: the signature first, over the bytes received, then decryption.
      expect(got.headers['x-sig']).toBe(hmac('sha512', secret, ['POST /charge?a=1|', got.body], 'base64'));
      expect(decryptRsaOaepA256Gcm(got.body.toString('ascii'), rsa.privateKey).plaintext.toString()).toBe(
        `{"n":"${card.number}"}`,
      );

      before = plain.received.length;
      expect((await forward(`${plain.url}/charge?a=1`, [sig.id, jwe.id])).status).toBe(200);
      got = plain.received[before];
      const { plaintext } = decryptRsaOaepA256Gcm(got.body.toString('ascii'), rsa.privateKey);
      expect(got.headers['x-sig']).toBe(hmac('sha512', secret, ['POST /charge?a=1|', plaintext], 'base64'));
      expect(got.headers['x-sig']).not.toBe(hmac('sha512', secret, ['POST /charge?a=1|', got.body], 'base64'));
    });
  });

  describe('mutual-tls', () => {
    it('without a client certificate, or with one from another CA, the TLS downstream refuses: 502 marked ours', async () => {
      expectOurs(await forward(`${mtls.url}/x`, []), 502, 'downstream-unreachable');
      const foreign = await createMethod('mutual-tls', {
        certificate: foreignClient.cert,
        private_key: foreignClient.key,
        ca_certificates: ca.cert,
      });
      expectOurs(await forward(`${mtls.url}/x`, [foreign.id]), 502, 'downstream-unreachable');
      expect(mtls.received).toHaveLength(0);
    });

    it('presents the method’s certificate, reuses its TLS connection across forwards, and a changed method gets a new one', async () => {
      const passphrase = 'correct horse battery';
      secrets.push(passphrase);
      const created = await createMethod('mutual-tls', {
        certificate: client.cert,
        private_key: ca.encryptKey(client.key, passphrase),
        passphrase,
        ca_certificates: ca.cert,
      });
      const handshakesBefore = mtls.handshakes;
      for (let i = 0; i < 8; i++) {
        const result = await forward(`${mtls.url}/pay`, [created.id]);
        expect(result.status).toBe(200);
        expect(result.body.client).toBe('client-one');
      }
      expect(mtls.handshakes - handshakesBefore).toBe(1);
      expect(mtls.received.at(-1)!.body.toString()).toBe(`{"n":"${card.number}"}`);

      const updated = await http(t.url, `/vault-forward/configs/${configId}/authentications/${created.id}`, {
        method: 'PUT',
        token,
        body: { fields: { certificate: client2.cert, private_key: client2.key, ca_certificates: ca.cert } },
      });
      expect(updated.status).toBe(200);
      const after = await forward(`${mtls.url}/pay`, [created.id]);
      expect(after.status).toBe(200);
      expect(after.body.client).toBe('client-two');
    });

    it('toward an http target (an operator-listed insecure host) it is refused, 422 naming the header: no card without TLS', async () => {
      const created = await createMethod('mutual-tls', { certificate: client.cert, private_key: client.key });
      const before = plain.received.length;
      const problem = expectOurs(await forward(`${plain.url}/pay`, [created.id]), 422, 'authentication-method-invalid');
      expect(problem.errors).toEqual([
        expect.objectContaining({ location: 'header', name: 'x-vault-forward-authentications' }),
      ]);
      expect(problem.errors[0].message).toContain(created.id);
      expect(plain.received.length).toBe(before);
    });

    it('a wrong passphrase fails the forward with a problem naming the method, and nothing is sent', async () => {
      const created = await createMethod('mutual-tls', {
        certificate: client.cert,
        private_key: ca.encryptKey(client.key, 'right one'),
        passphrase: 'wrong one',
      });
      const before = mtls.received.length;
      const problem = expectOurs(await forward(`${mtls.url}/pay`, [created.id]), 422, 'authentication-method-invalid');
      expect(JSON.stringify(problem)).toContain(created.id);
      expect(JSON.stringify(problem)).not.toContain('wrong one');
      expect(mtls.received.length).toBe(before);
    });

    // Node's TLS takes any text as a CA bundle, so nothing but X.509 parsing stops one that is broken.
    const brokenBundle = `${ca.cert}-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n`;

    it('a CA bundle that does not parse is refused at create and at replace, 400 naming fields.ca_certificates', async () => {
      const path = `/vault-forward/configs/${configId}/authentications`;
      const fields = { certificate: client.cert, private_key: client.key };
      for (const ca_certificates of ['not a certificate', brokenBundle]) {
        const problem = expectProblem(
          await http(t.url, path, {
            method: 'POST',
            token,
            body: { kind: 'mutual-tls', label: 'broken ca', fields: { ...fields, ca_certificates } },
          }),
          400,
          'validation-failed',
        );
        expect(problem.errors).toEqual([expect.objectContaining({ location: 'body', name: 'fields.ca_certificates' })]);
      }
      const created = await createMethod('mutual-tls', { ...fields, ca_certificates: ca.cert });
      const replaced = expectProblem(
        await http(t.url, `${path}/${created.id}`, {
          method: 'PUT',
          token,
          body: { fields: { ...fields, ca_certificates: brokenBundle } },
        }),
        400,
        'validation-failed',
      );
      expect(replaced.errors).toEqual([expect.objectContaining({ name: 'fields.ca_certificates' })]);
      // The method is unchanged and still forwards.
      expect((await forward(`${mtls.url}/pay`, [created.id])).status).toBe(200);
    });

    it('a stored method whose CA bundle does not parse (saved before it was refused) fails the forward 422, nothing sent', async () => {
      const created = await createMethod('mutual-tls', {
        certificate: client.cert,
        private_key: client.key,
        ca_certificates: ca.cert,
      });
      // As a row written by an earlier release, which only warned: never used yet, so nothing is cached.
      await t.db.query(
        `UPDATE vault_forward_authentications SET fields = jsonb_set(fields, '{ca_certificates}', to_jsonb($2::text))
          WHERE id = $1`,
        [created.id, brokenBundle],
      );
      const before = mtls.received.length;
      const handshakesBefore = mtls.handshakes;
      const problem = expectOurs(await forward(`${mtls.url}/pay`, [created.id]), 422, 'authentication-method-invalid');
      expect(problem.errors).toEqual([
        expect.objectContaining({ location: 'header', name: 'x-vault-forward-authentications' }),
      ]);
      expect(problem.errors[0].message).toContain(`${created.id}: its ca_certificates are not PEM certificates`);
      expect(mtls.received.length).toBe(before);
      expect(mtls.handshakes).toBe(handshakesBefore);
    });
  });

  describe('refused before anything is sent', () => {
    let sig: string;
    beforeAll(async () => {
      sig = (
        await createMethod('hmac-signature', {
          secret: 'refusals-secret-xyz',
          algorithm: 'sha256',
          encoding: 'hex',
          header: 'x-s',
        })
      ).id;
      secrets.push('refusals-secret-xyz');
    });

    /** An HMAC method of a new merchant account's own config, for the same target. */
    async function anotherMerchantsMethod(displayName: string, secret: string) {
      const otherMerchant = (await createMerchantAccount(t)).id;
      const otherToken = await (await createApiKey(t, otherMerchant)).token();
      const otherConfig = (
        await http(t.url, '/vault-forward/configs', {
          method: 'POST',
          token: otherToken,
          body: { display_name: displayName, hosts: [`127.0.0.1:${plain.port}`] },
        })
      ).body.id;
      secrets.push(secret);
      return createMethod(
        'hmac-signature',
        { secret, algorithm: 'sha256', encoding: 'hex', header: 'x-s' },
        { config: otherConfig, token: otherToken },
      );
    }

    async function refused(ids: string[], status: number, code: string, named: string) {
      const before = plain.received.length;
      const problem = expectOurs(await forward(`${plain.url}/charge`, ids), status, code);
      expect(JSON.stringify(problem.errors)).toContain(named);
      expect(plain.received.length).toBe(before);
    }

    it('another merchant’s method', async () => {
      const theirs = await anotherMerchantsMethod('Theirs', 'theirs-secret-abc');
      await refused([theirs.id], 422, 'authentication-method-not-usable', theirs.id);
    });

    it('another merchant’s method id gets exactly the answer an unknown id gets: nothing says it exists', async () => {
      const theirs = await anotherMerchantsMethod('Theirs too', 'theirs-secret-def');
      const unknown = randomUUID();
      const answer = async (id: string) => {
        const before = plain.received.length;
        const problem = expectOurs(await forward(`${plain.url}/charge`, [id]), 422, 'authentication-method-not-usable');
        expect(plain.received.length).toBe(before);
        // Everything but the id itself and what is per request.
        const { request_id: _r, instance: _i, ...rest } = problem;
        return JSON.parse(JSON.stringify(rest).split(id).join('<id>'));
      };
      expect(await answer(theirs.id)).toEqual(await answer(unknown));
    });

    it('a method of another config of the same merchant', async () => {
      const other = await createMethod(
        'hmac-signature',
        { secret: 'other-config-secret', algorithm: 'sha256', encoding: 'hex', header: 'x-s' },
        { config: otherConfigId },
      );
      secrets.push('other-config-secret');
      await refused([sig, other.id], 422, 'authentication-method-not-usable', other.id);
    });

    it('a deleted method', async () => {
      const doomed = await createMethod('hmac-signature', {
        secret: 'deleted-secret-abc',
        algorithm: 'sha256',
        encoding: 'hex',
        header: 'x-s',
      });
      secrets.push('deleted-secret-abc');
      expect((await forward(`${plain.url}/charge`, [doomed.id])).status).toBe(200);
      expect(
        (
          await http(t.url, `/vault-forward/configs/${configId}/authentications/${doomed.id}`, {
            method: 'DELETE',
            token,
          })
        ).status,
      ).toBe(204);
      await refused([doomed.id], 422, 'authentication-method-not-usable', doomed.id);
    });

    it('the same id twice, or two mutual-tls methods → 422', async () => {
      await refused([sig, sig], 422, 'authentication-methods-conflict', sig);
      const a = await createMethod('mutual-tls', { certificate: client.cert, private_key: client.key });
      const b = await createMethod('mutual-tls', { certificate: client2.cert, private_key: client2.key });
      await refused([a.id, b.id], 422, 'authentication-methods-conflict', b.id);
    });
  });
});
