import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectGr4vy } from '../support/gr4vy-schemas';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';
import { VaultForwardConfigsService } from '../../src/modules/forwarding-setup/configs/vault-forward-configs.service';

describe('Forwarding configs (the allow-list)', () => {
  let t: TestApp;
  let merchant: string;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
  });
  afterAll(() => t.close());

  const create = (body: unknown, tok = token) =>
    http(t.url, '/vault-forward/configs', { method: 'POST', token: tok, body });

  it('creates (normalising hosts, default methods), gets, lists, updates and deletes', async () => {
    const created = await create({
      display_name: 'PSP',
      hosts: ['API.PSP.example', 'api.psp.example:443', 'api.psp.example:8443'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      type: 'vault-forward-config',
      merchant_account_id: merchant,
      display_name: 'PSP',
      hosts: ['api.psp.example', 'api.psp.example:8443'],
      methods: ['POST', 'PUT', 'PATCH'],
      enabled: true,
    });
    const id = created.body.id;
    expect((await http(t.url, `/vault-forward/configs/${id}`, { token })).body).toEqual(created.body);
    const list = await http(t.url, '/vault-forward/configs?limit=1', { token });
    expect(list.body).toMatchObject({ limit: 1, previous_cursor: null });
    const updated = await http(t.url, `/vault-forward/configs/${id}`, {
      method: 'PUT',
      token,
      body: { methods: ['GET'], enabled: false },
    });
    expect(updated.body).toMatchObject({ display_name: 'PSP', methods: ['GET'], enabled: false });
    expect((await http(t.url, `/vault-forward/configs/${id}`, { method: 'DELETE', token })).status).toBe(204);
    expectProblem(await http(t.url, `/vault-forward/configs/${id}`, { token }), 404, 'vault-forward-config-not-found');
  });

  it('a non-public address is refused with the way out: FORWARD_INSECURE_HOSTS, for development', async () => {
    const problem = expectProblem(
      await create({ display_name: 'Local', hosts: ['[::1]:8443'] }),
      400,
      'validation-failed',
    );
    expect(problem.detail).toBe(
      'hosts[0] is a loopback address, which is never forwarded to unless the operator lists it in ' +
        'FORWARD_INSECURE_HOSTS (for development and tests).',
    );
    expect(problem.detail).not.toContain('can never');
  });

  it.each(['0x7f000002', '2130706434', '127.2', '0177.0.0.2', '0x7f.0.0.2', '0x7f000002:8443'])(
    'refuses %s, another spelling of the loopback 127.0.0.2, like the dotted form',
    async (host) => {
      const problem = expectProblem(
        await create({ display_name: 'Spelled', hosts: ['a.example', host] }),
        400,
        'validation-failed',
      );
      expect(problem.detail).toContain(`hosts[1] "${host}" is 127.0.0.2, a loopback address`);
      expect(problem.errors).toEqual([
        { location: 'body', name: 'hosts[1]', message: 'loopback addresses are not allowed' },
      ]);
      // The dotted form gets the same answer.
      expect(
        expectProblem(await create({ display_name: 'Dotted', hosts: ['127.0.0.2'] }), 400, 'validation-failed')
          .errors[0].message,
      ).toBe('loopback addresses are not allowed');
    },
  );

  it.each([
    ['0x7f000001', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['0177.0.0.1:8443', '127.0.0.1:8443'],
    ['0x08080808', '8.8.8.8'],
  ])(
    'refuses %s even where the address itself is allowed: a target URL names it %s, so it could never match',
    async (host, canonical) => {
      // 127.0.0.1 is in FORWARD_INSECURE_HOSTS here, and 8.8.8.8 is public.
      const problem = expectProblem(await create({ display_name: 'Spelled', hosts: [host] }), 400, 'validation-failed');
      expect(problem.detail).toContain(`another spelling of ${canonical.replace(/:\d+$/, '')}`);
      expect(problem.errors).toEqual([
        { location: 'body', name: 'hosts[0]', message: `write the address as ${canonical}` },
      ]);
      expect((await create({ display_name: 'Canonical', hosts: [canonical] })).status).toBe(201);
    },
  );

  it.each([
    [{ display_name: '', hosts: ['a.example'] }, 'display_name'],
    [{ display_name: 'x'.repeat(51), hosts: ['a.example'] }, 'display_name'],
    [{ display_name: 'X', hosts: [] }, 'hosts'],
    [{ display_name: 'X', hosts: ['https://a.example/path'] }, 'hosts'],
    [{ display_name: 'X', hosts: ['*.example.com'] }, 'hosts'],
    [{ display_name: 'X', hosts: ['a.example'], methods: ['TRACE'] }, 'methods'],
    [{ display_name: 'X', hosts: ['a.example'], methods: ['POST', 'POST'] }, 'methods'],
    [{ display_name: 'X', hosts: ['10.1.2.3'] }, 'hosts[0]'],
    [{ display_name: 'X', hosts: ['a.example', '[::1]:8443'] }, 'hosts[1]'],
  ])('refuses %p naming %s', async (body, field) => {
    const problem = expectProblem(await create(body), 400, 'validation-failed');
    expect(problem.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ location: 'body', name: field })]),
    );
  });

  it('isolates merchants', async () => {
    const mine = (await create({ display_name: 'Mine', hosts: ['mine.example'] })).body;
    const other = await (await createApiKey(t, (await createMerchantAccount(t)).id)).token();
    expectProblem(
      await http(t.url, `/vault-forward/configs/${mine.id}`, { token: other }),
      404,
      'vault-forward-config-not-found',
    );
    expectProblem(
      await http(t.url, `/vault-forward/configs/${mine.id}`, { method: 'DELETE', token: other }),
      404,
      'vault-forward-config-not-found',
    );
    const list = await http(t.url, '/vault-forward/configs?limit=100', { token: other });
    expect(list.body.items).toEqual([]);
  });

  it('fresh reads asked for together (a worker sending attempts) each see their own merchant and every change before them', async () => {
    const configs = t.get(VaultForwardConfigsService);
    const otherMerchant = (await createMerchantAccount(t)).id;
    const otherToken = await (await createApiKey(t, otherMerchant)).token();
    const a = (await create({ display_name: 'Fresh A', hosts: ['fresh-a.example'] })).body;
    const b = (await create({ display_name: 'Fresh B', hosts: ['fresh-b.example'] }, otherToken)).body;
    const hostsOf = (list: Array<{ id: string; hosts: ReadonlySet<string> }>, id: string) => [
      ...(list.find((c) => c.id === id)?.hosts ?? []),
    ];
    // Warm the cache, then change B's hosts behind it (no notice needed: fresh reads skip the cache).
    await configs.enabledConfigs(otherMerchant);
    await t.db.query(`UPDATE vault_forward_configs SET hosts = ARRAY['fresh-b2.example'] WHERE id = $1`, [b.id]);
    // Asked for in one turn: the first runs alone, the rest join one statement.
    const reads = await Promise.all(
      [merchant, otherMerchant, merchant, otherMerchant, otherMerchant].map((m) =>
        configs.enabledConfigs(m, { fresh: true }),
      ),
    );
    for (const i of [0, 2]) {
      expect(hostsOf(reads[i], a.id)).toEqual(['fresh-a.example']);
      expect(hostsOf(reads[i], b.id)).toEqual([]);
    }
    for (const i of [1, 3, 4]) {
      expect(hostsOf(reads[i], b.id)).toEqual(['fresh-b2.example']);
      expect(hostsOf(reads[i], a.id)).toEqual([]);
    }
    // A config disabled before the read is gone from it, batched or not.
    await t.db.query(`UPDATE vault_forward_configs SET enabled = false WHERE id = $1`, [a.id]);
    const after = await Promise.all(
      [merchant, merchant, otherMerchant].map((m) => configs.enabledConfigs(m, { fresh: true })),
    );
    expect(after.map((list, i) => hostsOf(list, i < 2 ? a.id : b.id))).toEqual([[], [], ['fresh-b2.example']]);
  });

  it('a change made through one API process takes effect at once in another (shared Redis)', async () => {
    const downstream: Downstream = await startHttpDownstream();
    const second = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    try {
      const forwardVia = (app: TestApp) =>
        http(app.url, '/vault-forward', {
          method: 'POST',
          token,
          headers: {
            'x-vault-forward-url': `${downstream.url}/x`,
            'x-vault-forward-http-method': 'POST',
            'content-type': 'application/json',
          },
          rawBody: '{}',
        });
      // The second process caches "nothing enabled"…
      expectProblem(await forwardVia(second), 403, 'endpoint-not-enabled');
      // …the first enables the host…
      const config = (await create({ display_name: 'Shared', hosts: [`127.0.0.1:${downstream.port}`] })).body;
      // …and the second follows well before its cache would expire.
      await waitFor(async () => (await forwardVia(second)).status === 200, {
        timeoutMs: 3_000,
        what: 'the second process to see the new config',
      });
      await http(t.url, `/vault-forward/configs/${config.id}`, { method: 'PUT', token, body: { enabled: false } });
      await waitFor(async () => (await forwardVia(second)).status === 403, {
        timeoutMs: 3_000,
        what: 'the second process to see the config disabled',
      });
    } finally {
      await second.close();
      await downstream.close();
    }
  });

  it('requires vault-forward-configs scopes', async () => {
    const key = await createApiKey(t, merchant);
    expectProblem(
      await create({ display_name: 'X', hosts: ['a.example'] }, await key.token(['vault-forward-configs.read'])),
      403,
      'forbidden',
    );
    expectProblem(
      await http(t.url, '/vault-forward/configs', { token: await key.token(['vault-forwards.write']) }),
      403,
      'forbidden',
    );
  });
});

describe('Forwarding configs by definition (Gr4vy’s shape)', () => {
  let t: TestApp;
  let merchant: string;
  let token: string;
  let instanceToken: string;
  let downstream: Downstream;
  const suffix = Math.random().toString(36).slice(2, 8);

  beforeAll(async () => {
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    instanceToken = await (await createApiKey(t, null)).token();
    downstream = await startHttpDownstream();
  });
  afterAll(async () => {
    await downstream.close();
    await t.close();
  });

  const create = (body: unknown, tok = token) =>
    http(t.url, '/vault-forward/configs', { method: 'POST', token: tok, body });
  const forward = (url: string, tok = token) =>
    http(t.url, '/vault-forward', {
      method: 'POST',
      token: tok,
      headers: {
        'x-vault-forward-url': url,
        'x-vault-forward-http-method': 'POST',
        'content-type': 'application/json',
      },
      rawBody: '{}',
    });
  /** An instance definition of the local downstream, by origin. */
  const localDefinition = async (id: string, hosts: string[]) => {
    const created = await http(t.url, '/vault-forward/definitions', {
      method: 'POST',
      token: instanceToken,
      body: {
        id,
        display_name: 'Local PSP',
        hosts,
        authentications: [
          {
            kind: 'mtls',
            title: 'Mutual TLS',
            description: '',
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
                display_name: 'Key',
                required: true,
                format: 'multiline',
                secret: true,
                maps_to: 'private_key',
              },
            ],
          },
        ],
      },
    });
    expect(created.status).toBe(201);
  };

  it('creates a config from a catalog definition: its hosts and name, in Gr4vy’s shape; a second is 409', async () => {
    const created = await create({ definition_id: 'visa' });
    expect(created.status).toBe(201);
    expectGr4vy('PCIForwardConfig', created.body);
    expect(created.body).toMatchObject({
      type: 'vault-forward-config',
      merchant_account_id: merchant,
      definition_id: 'visa',
      display_name: 'Visa Developer Platform',
      hosts: ['https://api.visa.com', 'https://sandbox.api.visa.com'],
      creator: null,
      // Ours, additive: defaults a Gr4vy client never sends.
      methods: ['POST', 'PUT', 'PATCH'],
      enabled: true,
    });
    const list = await http(t.url, '/vault-forward/configs', { token });
    expectGr4vy('PCIForwardConfigs', list.body);

    const second = expectProblem(
      await create({ definition_id: 'visa', display_name: 'Again' }),
      409,
      'duplicate-record',
    );
    expect(second.errors).toEqual([expect.objectContaining({ location: 'body', name: 'definition_id' })]);
    // Another merchant account has a config of its own for it.
    const other = await (await createApiKey(t, (await createMerchantAccount(t)).id)).token();
    expect((await create({ definition_id: 'visa' }, other)).status).toBe(201);
  });

  it.each([
    [{ definition_id: 'no-such-psp' }, 'definition_id'],
    [{ definition_id: 'custom-0b0c6f5e-5c38-4a5e-9d0e-6f3a7f2f6d10' }, 'definition_id'],
    [{ definition_id: 'Visa!' }, 'definition_id'],
    [{ definition_id: 'amadeus', hosts: ['evil.example'] }, 'hosts'],
    [{ hosts: ['a.example'] }, 'display_name'],
    [{ display_name: 'No hosts' }, 'hosts'],
  ])('refuses %p naming %s', async (body, name) => {
    const problem = expectProblem(await create(body), 400, 'validation-failed');
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ location: 'body', name })]));
  });

  it('a config of a definition keeps the definition’s hosts; the definition’s new hosts reach it', async () => {
    const id = `local-${suffix}`;
    await localDefinition(id, [`http://127.0.0.1:${downstream.port}`]);
    const config = (await create({ definition_id: id })).body;
    expect(config.hosts).toEqual([`http://127.0.0.1:${downstream.port}`]);
    expect((await forward(`${downstream.url}/x`)).status).toBe(200);
    expectProblem(
      await http(t.url, `/vault-forward/configs/${config.id}`, {
        method: 'PUT',
        token,
        body: { hosts: ['a.example'] },
      }),
      400,
      'validation-failed',
    );
    const moved = await http(t.url, `/vault-forward/definitions/${id}`, {
      method: 'PUT',
      token: instanceToken,
      body: {
        display_name: 'Local PSP',
        hosts: ['http://127.0.0.1:1'],
        authentications: (await http(t.url, `/vault-forward/definitions/${id}`, { token })).body.authentications.map(
          (a: { kind: string }) => ({
            kind: a.kind,
            title: 'Mutual TLS',
            description: '',
            fields: [
              {
                key: 'cert',
                display_name: 'C',
                required: true,
                format: 'multiline',
                secret: false,
                maps_to: 'certificate',
              },
              {
                key: 'key',
                display_name: 'K',
                required: true,
                format: 'multiline',
                secret: true,
                maps_to: 'private_key',
              },
            ],
          }),
        ),
      },
    });
    expect(moved.status).toBe(200);
    expect((await http(t.url, `/vault-forward/configs/${config.id}`, { token })).body.hosts).toEqual([
      'http://127.0.0.1:1',
    ]);
    expectProblem(await forward(`${downstream.url}/x`), 403, 'endpoint-not-enabled');
    // In use: not deleted.
    expectProblem(
      await http(t.url, `/vault-forward/definitions/${id}`, { method: 'DELETE', token: instanceToken }),
      409,
      'vault-forward-definition-in-use',
    );
    await http(t.url, `/vault-forward/configs/${config.id}`, { method: 'DELETE', token });
    expect(
      (await http(t.url, `/vault-forward/definitions/${id}`, { method: 'DELETE', token: instanceToken })).status,
    ).toBe(204);
  });

  it('an origin enables its scheme and port only; a host entry, as before, the host and port', async () => {
    const merchantKey = await (await createApiKey(t, (await createMerchantAccount(t)).id)).token();
    const origin = `http://127.0.0.1:${downstream.port}`;
    const config = await create(
      { display_name: 'By origin', hosts: [`HTTP://127.0.0.1:${downstream.port}`] },
      merchantKey,
    );
    expect(config.status).toBe(201);
    expect(config.body.hosts).toEqual([origin]);
    expect((await forward(`${origin}/x`, merchantKey)).status).toBe(200);
    // Same host, same port, another scheme: not this origin.
    expectProblem(await forward(`https://127.0.0.1:${downstream.port}/x`, merchantKey), 403, 'endpoint-not-enabled');
    // Same host, another port.
    expectProblem(await forward(`http://127.0.0.1:${downstream.port + 1}/x`, merchantKey), 403, 'endpoint-not-enabled');
    // An https origin of a host that is not public is refused like the bare host.
    expectProblem(
      await create({ display_name: 'X', hosts: ['https://10.1.2.3'] }, merchantKey),
      400,
      'validation-failed',
    );
    // http only for the operator's insecure hosts.
    const plain = expectProblem(
      await create({ display_name: 'X', hosts: ['http://api.psp.example'] }),
      400,
      'validation-failed',
    );
    expect(plain.errors).toEqual([{ location: 'body', name: 'hosts[0]', message: 'must be an https origin' }]);
  });

  it('a config made with its own hosts has a custom definition, readable by its merchant account only', async () => {
    const config = (await create({ display_name: 'Own', hosts: ['own.psp.example'] })).body;
    expect(config.definition_id).toBe(`custom-${config.id}`);
    const definition = await http(t.url, `/vault-forward/definitions/${config.definition_id}`, { token });
    expect(definition.status).toBe(200);
    expectGr4vy('PCIForwardDefinition', definition.body);
    expect(definition.body).toMatchObject({
      id: config.definition_id,
      display_name: 'Own',
      hosts: ['own.psp.example'],
      source: 'custom',
    });
    const other = await (await createApiKey(t, (await createMerchantAccount(t)).id)).token();
    expectProblem(
      await http(t.url, `/vault-forward/definitions/${config.definition_id}`, { token: other }),
      404,
      'vault-forward-definition-not-found',
    );
    // Custom definitions are not listed.
    const list = await http(t.url, '/vault-forward/definitions', { token });
    expect(list.text).not.toContain(config.definition_id);
  });
});
