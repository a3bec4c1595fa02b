import { createServer as createHttpsServer, Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { getToken, JWTScope } from '@gr4vy/sdk';
import { createApiKey } from '../factories/api-keys';
import { cardNumber, createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectGr4vy } from '../support/gr4vy-schemas';
import { expectProblem, http } from '../support/http';
import { hmac } from '../support/independent-crypto';
import { startTestApp, TestApp } from '../support/test-app';
import { TestCa } from '../support/test-pki';

/**
 * Issue 22, acceptance: a client written against Gr4vy's published management API (fetch, with tokens the
 * official SDK makes, as the SDK has no vault-forward functions) lists definitions, creates a config from
 * one, adds an mtls and a signature method with `fields[]`, reads them (no secret in any answer), and
 * forwards with both to an HTTPS server that checks the client certificate and recomputes the signature.
 * Every answer is validated against Gr4vy's schemas (test/fixtures).
 */
interface Received {
  url: string;
  clientCn: string | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function startMtlsServer(server: { cert: string; key: string }, clientCa: string) {
  const https: Server = createHttpsServer({
    cert: server.cert,
    key: server.key,
    ca: clientCa,
    requestCert: true,
    rejectUnauthorized: true,
  });
  const received: Received[] = [];
  https.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      received.push({
        url: req.url!,
        clientCn: peer?.subject?.CN as string | undefined,
        headers: req.headers,
        body: Buffer.concat(chunks),
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  return new Promise<{ port: number; received: Received[]; close(): Promise<void> }>((resolve) => {
    https.listen(0, '127.0.0.1', () =>
      resolve({
        port: (https.address() as AddressInfo).port,
        received,
        close: () =>
          new Promise<void>((r) => {
            https.closeAllConnections();
            https.close(() => r());
          }),
      }),
    );
  });
}

describe('Gr4vy’s Vault Forward management API, as a Gr4vy client uses it', () => {
  let t: TestApp;
  let server: Awaited<ReturnType<typeof startMtlsServer>>;
  let merchant: string;
  let token: string;
  let instanceToken: string;
  let definitionId: string;
  const ca = TestCa.create('Gr4vy flow CA');
  const client = ca.issue('gr4vy-client', 'client');
  const SHARED_SECRET = 'gr4vy-SHARED-secret-7c1e';

  beforeAll(async () => {
    server = await startMtlsServer(ca.issue('127.0.0.1', 'server'), ca.cert);
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    merchant = (await createMerchantAccount(t)).id;
    const key = await createApiKey(t, merchant);
    token = await getToken({ privateKey: key.privateKeyPem, scopes: [JWTScope.ReadAll, JWTScope.WriteAll] });
    instanceToken = await (await createApiKey(t, null)).token();
    // A definition of the local server, as an instance administrator adds one for a third party no catalog lists.
    definitionId = `local-psp-${Math.random().toString(36).slice(2, 8)}`;
    const added = await http(t.url, '/vault-forward/definitions', {
      method: 'POST',
      token: instanceToken,
      body: {
        id: definitionId,
        display_name: 'Local PSP',
        hosts: [`https://127.0.0.1:${server.port}`],
        authentications: [
          {
            kind: 'mtls',
            title: 'Mutual TLS',
            description: 'The client certificate the PSP issued.',
            fields: [
              {
                key: 'cert',
                display_name: 'Certificate',
                required: true,
                format: 'multiline',
                secret: false,
                maps_to: 'certificate',
              },
              {
                key: 'key',
                display_name: 'Private key',
                required: true,
                format: 'multiline',
                secret: true,
                maps_to: 'private_key',
              },
              {
                key: 'ca',
                display_name: 'CA',
                required: false,
                format: 'multiline',
                secret: false,
                maps_to: 'ca_certificates',
              },
            ],
          },
          {
            kind: 'signature',
            title: 'Signature',
            description: 'HMAC-SHA256 of timestamp and body.',
            fields: [
              {
                key: 'shared_secret',
                display_name: 'Shared secret',
                required: true,
                format: 'text',
                secret: true,
                maps_to: 'secret',
              },
              {
                key: 'prefix',
                display_name: 'Prefix',
                required: false,
                format: 'text',
                secret: false,
                maps_to: 'prefix',
              },
            ],
            settings: { algorithm: 'sha256', encoding: 'hex', header: 'x-signature', timestamp_header: 'x-timestamp' },
          },
        ],
      },
    });
    expect(added.status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
    await server.close();
  });
  afterEach(() => {
    expect(t.logs.text).not.toContain(SHARED_SECRET);
    expect(t.logs.text).not.toContain(client.key.split('\n')[1]);
  });

  const api = (method: string, path: string, body?: unknown) => http(t.url, path, { method, token, body });

  it('lists definitions, creates a config from one (409 on a second), adds mtls and signature, and forwards with both', async () => {
    const definitions = await api('GET', '/vault-forward/definitions');
    expectGr4vy('PCIForwardDefinitions', definitions.body);
    expect(definitions.body.items.map((d: { id: string }) => d.id)).toContain(definitionId);

    const config = await api('POST', '/vault-forward/configs', { definition_id: definitionId });
    expect(config.status).toBe(201);
    expectGr4vy('PCIForwardConfig', config.body);
    expectProblem(
      await api('POST', '/vault-forward/configs', { definition_id: definitionId }),
      409,
      'duplicate-record',
    );
    const base = `/vault-forward/configs/${config.body.id}/authentications`;

    const mtls = await api('POST', base, {
      kind: 'mtls',
      display_name: 'Our client certificate',
      fields: [
        { key: 'cert', value: client.cert },
        { key: 'key', value: client.key },
        { key: 'ca', value: ca.cert },
      ],
    });
    expect(mtls.status).toBe(201);
    expectGr4vy('PCIForwardConfigAuthentication', mtls.body);
    expect(mtls.body).toMatchObject({
      type: 'vault-forward-config-authentication',
      kind: 'mtls',
      display_name: 'Our client certificate',
      label: 'Our client certificate',
      fields: [
        { key: 'cert', value: client.cert },
        { key: 'ca', value: ca.cert },
      ],
      creator: null,
    });
    const signature = await api('POST', base, {
      kind: 'signature',
      display_name: 'Signing',
      fields: [
        { key: 'shared_secret', value: SHARED_SECRET },
        { key: 'prefix', value: 'v1=' },
      ],
    });
    expect(signature.status).toBe(201);
    expectGr4vy('PCIForwardConfigAuthentication', signature.body);
    expect(signature.body.fields).toEqual([{ key: 'prefix', value: 'v1=' }]);

    const list = await api('GET', base);
    expectGr4vy('PCIForwardConfigAuthentications', list.body);
    expect(list.body.items.map((m: { id: string }) => m.id).sort()).toEqual([mtls.body.id, signature.body.id].sort());
    const one = await api('GET', `${base}/${signature.body.id}`);
    expectGr4vy('PCIForwardConfigAuthentication', one.body);
    expect(one.body).toEqual(signature.body);
    // The config embeds its methods, newest first, as Gr4vy's PCIForwardConfig does.
    const withMethods = await api('GET', `/vault-forward/configs/${config.body.id}`);
    expectGr4vy('PCIForwardConfig', withMethods.body);
    expect(withMethods.body.authentications).toEqual([signature.body, mtls.body]);
    const configs = await api('GET', '/vault-forward/configs');
    expectGr4vy('PCIForwardConfigs', configs.body);
    expect(configs.body.items.find((c: { id: string }) => c.id === config.body.id).authentications).toHaveLength(2);
    for (const text of [mtls.text, signature.text, list.text, one.text, withMethods.text, configs.text]) {
      expect(text).not.toContain(SHARED_SECRET);
      expect(text).not.toContain('PRIVATE KEY');
    }

    const number = cardNumber('4', 16);
    const card = await createCard(t, merchant, { number, expiration_date: '04/31' });
    const forwarded = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `https://127.0.0.1:${server.port}/charge`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card.id,
        'x-vault-forward-authentications': `${mtls.body.id},${signature.body.id}`,
        'content-type': 'application/json',
      },
      rawBody: '{"n":"{{ CARD_NUMBER_1 }}"}',
    });
    expect(forwarded.status).toBe(200);
    const got = server.received.at(-1)!;
    expect(got.clientCn).toBe('gr4vy-client');
    expect(got.body.toString()).toBe(`{"n":"${number}"}`);
    const timestamp = String(got.headers['x-timestamp']);
    expect(got.headers['x-signature']).toBe(`v1=${hmac('sha256', SHARED_SECRET, [`${timestamp}.`, got.body], 'hex')}`);
  });

  describe('fields[] read against the definition', () => {
    let base: string;
    beforeAll(async () => {
      const other = await (await createApiKey(t, (await createMerchantAccount(t)).id)).token();
      const config = await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token: other,
        body: { definition_id: definitionId },
      });
      base = `/vault-forward/configs/${config.body.id}/authentications`;
      token = other;
    });

    it.each([
      [{ kind: 'signature', display_name: 'S', fields: [] }, 'fields.shared_secret', 'is required'],
      [
        { kind: 'signature', display_name: 'S', fields: [{ key: 'shared_secret', value: '' }] },
        'fields.shared_secret',
        'is required',
      ],
      [
        {
          kind: 'signature',
          display_name: 'S',
          fields: [
            { key: 'shared_secret', value: 's' },
            { key: 'secret', value: 's' },
          ],
        },
        'fields.secret',
        'is not a field of signature',
      ],
      [
        {
          kind: 'signature',
          display_name: 'S',
          fields: [
            { key: 'shared_secret', value: 's' },
            { key: 'prefix', value: 'a\nb' },
          ],
        },
        'fields.prefix',
        'header value',
      ],
      [
        {
          kind: 'mtls',
          display_name: 'M',
          fields: [
            { key: 'cert', value: 'x' },
            { key: 'key', value: 'y' },
            { key: 'ca', value: 'not a pem' },
          ],
        },
        'fields.ca',
        'PEM',
      ],
      [{ kind: 'mle', display_name: 'E', fields: [] }, 'kind', 'mtls, signature'],
      [{ kind: 'signature', display_name: 'S', fields: { shared_secret: 's' } }, 'fields', 'array'],
      [{ kind: 'signature', display_name: 'S', fields: [{ key: 'shared_secret' }] }, 'fields[0]', '{key, value}'],
      [{ kind: 'signature', display_name: 'S', label: 'S', fields: [] }, 'label', 'display_name'],
      [{ kind: 'hmac-signature', label: 'S', display_name: 'S', fields: {} }, 'display_name', 'label'],
    ])('refuses %j naming %s', async (body, name, message) => {
      const problem = expectProblem(await api('POST', base, body), 400, 'validation-failed');
      expect(problem.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ location: 'body', name, message: expect.stringContaining(message) }),
        ]),
      );
      expect(JSON.stringify(problem)).not.toContain('a\\nb');
    });

    it('an update sets the fields sent, keeps the others (secrets included), and "" unsets an optional one', async () => {
      const created = await api('POST', base, {
        kind: 'signature',
        display_name: 'Before',
        fields: [
          { key: 'shared_secret', value: SHARED_SECRET },
          { key: 'prefix', value: 'v1=' },
        ],
      });
      const path = `${base}/${created.body.id}`;
      const renamed = await api('PUT', path, { display_name: 'After' });
      expectGr4vy('PCIForwardConfigAuthentication', renamed.body);
      expect(renamed.body).toMatchObject({ display_name: 'After', fields: [{ key: 'prefix', value: 'v1=' }] });
      const unset = await api('PUT', path, { fields: [{ key: 'prefix', value: '' }] });
      expect(unset.status).toBe(200);
      expect(unset.body.fields).toEqual([]);
      // The secret stayed: still usable, and a required field cannot be unset.
      const problem = expectProblem(
        await api('PUT', path, { fields: [{ key: 'shared_secret', value: '' }] }),
        400,
        'validation-failed',
      );
      expect(problem.errors).toEqual([
        { location: 'body', name: 'fields.shared_secret', message: 'is required; it cannot be unset' },
      ]);
      const methods = await t
        .get<
          import('../../src/modules/forwarding-setup/authentication-methods/forward-authentications.service').ForwardAuthenticationsService
        >(
          (await import('../../src/modules/forwarding-setup/authentication-methods/forward-authentications.service'))
            .ForwardAuthenticationsService,
        )
        .forForward(unset.body.merchant_account_id, unset.body.config_id, [created.body.id]);
      expect(methods[0].fields).toMatchObject({ secret: SHARED_SECRET, header: 'x-signature' });
      expect(methods[0].fields.prefix).toBeUndefined();
    });

    it('a config answer embeds at most 20 methods, the newest', async () => {
      const config = (
        await api('POST', '/vault-forward/configs', { display_name: 'Many', hosts: ['many.psp.example'] })
      ).body;
      const ids: string[] = [];
      for (let i = 0; i < 21; i++) {
        const created = await api('POST', `/vault-forward/configs/${config.id}/authentications`, {
          kind: 'hmac-signature',
          label: `m${i}`,
          fields: { secret: 's', algorithm: 'sha256', encoding: 'hex', header: 'x-sig' },
        });
        ids.push(created.body.id);
      }
      const answer = await api('GET', `/vault-forward/configs/${config.id}`);
      expect(answer.body.authentications.map((m: { id: string }) => m.id)).toEqual(ids.slice(1).reverse());
    });

    it('a method in our shape keeps our shape, beside Gr4vy’s in the same list', async () => {
      const ours = await api('POST', base, {
        kind: 'hmac-signature',
        label: 'Ours',
        fields: { secret: 's3cr3t-ours', algorithm: 'sha256', encoding: 'hex', header: 'x-sig' },
      });
      expect(ours.status).toBe(201);
      expect(ours.body).toMatchObject({
        type: 'vault-forward-authentication',
        kind: 'hmac-signature',
        fields: { header: 'x-sig' },
      });
      const list = await api('GET', base);
      expect(list.body.items.map((m: { type: string }) => m.type)).toEqual(
        expect.arrayContaining(['vault-forward-authentication', 'vault-forward-config-authentication']),
      );
    });
  });
});
