import { getToken, JWTScope } from '@gr4vy/sdk';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectGr4vy } from '../support/gr4vy-schemas';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

/** A definition an instance administrator adds: a PSP that signs with a shared secret, over mTLS too. */
function examplePsp(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    display_name: 'Example PSP',
    hosts: ['https://API.example-psp.com', 'https://test.example-psp.com:8443'],
    authentications: [
      {
        kind: 'signature',
        title: 'Request signature',
        description: 'HMAC-SHA256 of the body, hex, in x-psp-signature.',
        fields: [
          {
            key: 'api_secret',
            display_name: 'API secret',
            required: true,
            format: 'text',
            secret: true,
            maps_to: 'secret',
          },
        ],
        settings: { algorithm: 'sha256', encoding: 'hex', header: 'x-psp-signature', template: '{body}' },
      },
    ],
    ...overrides,
  };
}

describe('Vault Forward definitions (Gr4vy’s catalog model)', () => {
  let t: TestApp;
  let merchant: string;
  let token: string;
  let instanceToken: string;

  beforeAll(async () => {
    t = await startTestApp();
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    instanceToken = await (await createApiKey(t, null)).token();
  });
  afterAll(() => t.close());

  const admin = (method: string, path: string, body?: unknown, tok = instanceToken) =>
    http(t.url, `/vault-forward/definitions${path}`, { method, token: tok, body });

  it('lists the shipped catalog in Gr4vy’s shape, and nothing of how fields map onto our mechanisms', async () => {
    const list = await http(t.url, '/vault-forward/definitions', { token });
    expect(list.status).toBe(200);
    expectGr4vy('PCIForwardDefinitions', list.body);
    const ids = list.body.items.map((d: { id: string }) => d.id);
    expect(ids).toEqual(
      expect.arrayContaining([
        'amadeus',
        'checkout-com',
        'cybersource',
        'mastercard',
        'paypal-nvp',
        'visa',
        'worldpay',
      ]),
    );
    const visa = list.body.items.find((d: { id: string }) => d.id === 'visa');
    expect(visa).toMatchObject({
      type: 'vault-forward-definition',
      display_name: 'Visa Developer Platform',
      hosts: ['https://api.visa.com', 'https://sandbox.api.visa.com'],
      source: 'catalog',
    });
    expect(visa.authentications.map((a: { kind: string }) => a.kind)).toEqual(['mtls', 'mle']);
    expect(visa.authentications[0]).toMatchObject({
      type: 'vault-forward-authentication-definition',
      fields: expect.arrayContaining([
        { key: 'private_key', display_name: 'Private key (PEM)', required: true, format: 'multiline', secret: true },
      ]),
    });
    expect(list.text).not.toContain('maps_to');
    expect(list.text).not.toContain('settings');

    const one = await http(t.url, '/vault-forward/definitions/amadeus', { token });
    expectGr4vy('PCIForwardDefinition', one.body);
    expect(one.body).toEqual(list.body.items.find((d: { id: string }) => d.id === 'amadeus'));
    expectProblem(
      await http(t.url, '/vault-forward/definitions/no-such-psp', { token }),
      404,
      'vault-forward-definition-not-found',
    );
  });

  it('an instance administrator adds, replaces and deletes a definition; merchants read it', async () => {
    const created = await admin('POST', '', examplePsp('example-psp'));
    expect(created.status).toBe(201);
    expectGr4vy('PCIForwardDefinition', created.body);
    expect(created.body).toMatchObject({
      id: 'example-psp',
      source: 'instance',
      // Origins, normalised as a URL parser writes them.
      hosts: ['https://api.example-psp.com', 'https://test.example-psp.com:8443'],
    });
    expect((await http(t.url, '/vault-forward/definitions/example-psp', { token })).body).toEqual(created.body);
    const listed = await http(t.url, '/vault-forward/definitions', { token });
    expect(listed.body.items.map((d: { id: string }) => d.id)).toContain('example-psp');

    const replaced = await admin('PUT', '/example-psp', {
      ...examplePsp('x'),
      id: undefined,
      display_name: 'Example PSP v2',
      hosts: ['https://api2.example-psp.com'],
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ display_name: 'Example PSP v2', hosts: ['https://api2.example-psp.com'] });

    expect((await admin('DELETE', '/example-psp')).status).toBe(204);
    expectProblem(await admin('DELETE', '/example-psp'), 404, 'vault-forward-definition-not-found');
  });

  it('a definition may have no authentication method (the third party takes the caller’s own credentials)', async () => {
    const created = await admin('POST', '', examplePsp('passthrough-psp', { authentications: [] }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: 'passthrough-psp', authentications: [] });
    const read = await http(t.url, '/vault-forward/definitions/passthrough-psp', { token });
    expect(read.body).toEqual(created.body);
    // A merchant's config made from it holds no method either; a forward passes the caller's Authorization.
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { definition_id: 'passthrough-psp' },
    });
    expect(config.status).toBe(201);
    expectGr4vy('PCIForwardConfig', config.body);
    expect(config.body).toMatchObject({ definition_id: 'passthrough-psp', authentications: [] });
    // Still at most three.
    const four = Array.from({ length: 4 }, () => examplePsp('x').authentications[0]);
    expectProblem(await admin('POST', '', examplePsp('too-many', { authentications: four })), 400, 'validation-failed');
    // Gone again: the other tests read the whole list against Gr4vy's schema, whose definitions have one at least.
    const removed = await http(t.url, `/vault-forward/configs/${config.body.id as string}`, {
      method: 'DELETE',
      token,
    });
    expect(removed.status).toBe(204);
    expect((await admin('DELETE', '/passthrough-psp')).status).toBe(204);
  });

  it('refuses a second definition with an id taken, and changes to the catalog', async () => {
    expect((await admin('POST', '', examplePsp('taken-psp'))).status).toBe(201);
    expectProblem(await admin('POST', '', examplePsp('taken-psp')), 409, 'vault-forward-definition-exists');
    expectProblem(await admin('POST', '', examplePsp('visa')), 409, 'vault-forward-definition-exists');
    const { id: _id, ...body } = examplePsp('visa');
    expectProblem(await admin('PUT', '/visa', body), 409, 'vault-forward-definition-read-only');
    expectProblem(await admin('DELETE', '/amadeus'), 409, 'vault-forward-definition-read-only');
  });

  it('is for instance keys only, with the vault-forward-definitions scopes', async () => {
    expectProblem(await admin('POST', '', examplePsp('merchant-psp'), token), 403, 'instance-key-required');
    // Tokens the official SDK makes, with its own spelling of the scopes (JWTScope).
    const sdkToken = async (merchantAccountId: string | null, scope: JWTScope) =>
      getToken({ privateKey: (await createApiKey(t, merchantAccountId)).privateKeyPem, scopes: [scope] });
    const readOnly = await sdkToken(merchant, JWTScope.VaultForwardDefinitionsRead);
    const listed = await http(t.url, '/vault-forward/definitions', { token: readOnly });
    expect(listed.status).toBe(200);
    expectGr4vy('PCIForwardDefinitions', listed.body);
    expect(listed.body.items.map((d: { id: string }) => d.id)).toEqual(expect.arrayContaining(['visa', 'amadeus']));
    expect((await http(t.url, '/vault-forward/definitions/visa', { token: readOnly })).status).toBe(200);
    const configsOnly = await sdkToken(merchant, JWTScope.VaultForwardConfigsRead);
    expectProblem(await http(t.url, '/vault-forward/definitions', { token: configsOnly }), 403, 'forbidden');
    const instanceRead = await sdkToken(null, JWTScope.VaultForwardDefinitionsRead);
    expectProblem(await admin('POST', '', examplePsp('read-psp'), instanceRead), 403, 'forbidden');
  });

  const field = (overrides: Record<string, unknown>) => ({
    ...examplePsp('bad-psp').authentications[0],
    fields: [{ ...examplePsp('bad-psp').authentications[0].fields[0], ...overrides }],
  });
  it.each([
    [{ hosts: ['api.example-psp.com'] }, 'hosts[0]'],
    [{ hosts: ['https://api.example-psp.com/v1'] }, 'hosts[0]'],
    [{ id: 'custom-psp' }, 'id'],
    [{ id: 'Bad_Id' }, 'id'],
    [{ authentications: [{ ...examplePsp('x').authentications[0], kind: 'oauth' }] }, 'authentications.0.kind'],
    [{ authentications: [field({ maps_to: 'password' })] }, 'authentications.0.fields.0.maps_to'],
    // A secret of ours declared not secret would be returned in answers.
    [{ authentications: [field({ secret: false })] }, 'authentications.0.fields.0.secret'],
    [{ authentications: [field({ required: false })] }, 'authentications.0.fields.0.required'],
    [{ authentications: [field({ format: 'password' })] }, 'authentications.0.fields.0.format'],
    [
      {
        authentications: [
          { ...examplePsp('x').authentications[0], settings: { algorithm: 'md5', encoding: 'hex', header: 'x' } },
        ],
      },
      'authentications.0.settings.algorithm',
    ],
    [
      {
        authentications: [
          { ...examplePsp('x').authentications[0], settings: { algorithm: 'sha256', encoding: 'hex' } },
        ],
      },
      'authentications.0.fields',
    ],
    [
      {
        authentications: [
          {
            ...examplePsp('x').authentications[0],
            settings: { ...examplePsp('x').authentications[0].settings, secret: 's' },
          },
        ],
      },
      'authentications.0.settings.secret',
    ],
  ])('refuses %p naming %s', async (overrides, name) => {
    const problem = expectProblem(await admin('POST', '', examplePsp('bad-psp', overrides)), 400, 'validation-failed');
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ location: 'body', name })]));
  });
});
