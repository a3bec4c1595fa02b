import { createApiKey, TestKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectProblem, http, HttpResult } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Who may forward, and where to: the scope of POST /vault-forward and the allow-list. Each case
 * also checks that nothing reached the target, and each refusal has a twin that is let through, so
 * a check that refuses everything fails here as surely as one that refuses nothing.
 */
describe('POST /vault-forward: scope and allow-list', () => {
  let t: TestApp;
  let downstream: Downstream;

  beforeAll(async () => {
    downstream = await startHttpDownstream();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
  });
  afterAll(async () => {
    await t.close();
    await downstream.close();
  });

  async function merchantWithKey(): Promise<{ merchant: string; key: TestKey; token: string }> {
    const merchant = (await createMerchantAccount(t)).id;
    const key = await createApiKey(t, merchant);
    return { merchant, key, token: await key.token() };
  }

  const forward = (token: string, url: string, method = 'POST', extra: Record<string, string> = {}) =>
    http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': url,
        'x-vault-forward-http-method': method,
        'content-type': 'application/json',
        ...extra,
      },
      rawBody: '{"hello":"target"}',
    });

  const addConfig = async (token: string, hosts: string[], extra: Record<string, unknown> = {}) => {
    const created = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Access test', hosts, ...extra },
    });
    expect(created.status).toBe(201);
    return created.body as { id: string };
  };

  /** Runs `send`, and checks the target saw exactly `expected` more requests. */
  async function reaching(expected: number, send: () => Promise<HttpResult>): Promise<HttpResult> {
    const before = downstream.received.length;
    const result = await send();
    expect(downstream.received.length - before).toBe(expected);
    return result;
  }

  describe('scope vault-forwards.write', () => {
    let token: TestKey['token'];
    let target: string;

    beforeAll(async () => {
      const m = await merchantWithKey();
      token = (scopes) => m.key.token(scopes);
      await addConfig(m.token, [`127.0.0.1:${downstream.port}`]);
      target = `${downstream.url}/scoped`;
    });

    it.each([
      [['vault-forwards.read']],
      [['*.read']],
      [['vault-forward-configs.write', 'payment-methods.write', 'buyers.write', 'merchant-accounts.write']],
      [['vault-forward-authentications.write']],
      [[]],
    ])('a token with %j is refused with 403, and nothing is sent', async (scopes) => {
      const result = await reaching(0, async () => forward(await token(scopes), target));
      const problem = expectProblem(result, 403, 'forbidden');
      expect(problem.detail).toContain('vault-forwards.write');
      expect(result.headers.get('x-vault-forward-error')).toBe('true');
    });

    it.each([[['vault-forwards.write']], [['*.write']], [['vault-forwards.read', 'vault-forwards.write']]])(
      'a token with %j forwards',
      async (scopes) => {
        const result = await reaching(1, async () => forward(await token(scopes), target));
        expect(result.status).toBe(200);
        expect(JSON.parse(downstream.received.at(-1)!.body.toString())).toEqual({ hello: 'target' });
      },
    );
  });

  describe('the allow-list applies to every merchant account', () => {
    it('a merchant account with no config at all forwards nowhere', async () => {
      const { token } = await merchantWithKey();
      const result = await reaching(0, () => forward(token, `${downstream.url}/no-config`));
      const problem = expectProblem(result, 403, 'endpoint-not-enabled');
      expect(problem.errors[0]).toMatchObject({
        location: 'header',
        name: 'x-vault-forward-url',
        message: 'host not enabled',
      });
    });

    it('a merchant account whose only config is disabled forwards nowhere; enabled again, it forwards', async () => {
      const { token } = await merchantWithKey();
      const config = await addConfig(token, [`127.0.0.1:${downstream.port}`], { enabled: false });
      expectProblem(await reaching(0, () => forward(token, `${downstream.url}/disabled`)), 403, 'endpoint-not-enabled');
      expect(
        (await http(t.url, `/vault-forward/configs/${config.id}`, { method: 'PUT', token, body: { enabled: true } }))
          .status,
      ).toBe(200);
      expect((await reaching(1, () => forward(token, `${downstream.url}/enabled`))).status).toBe(200);
    });

    it('another merchant account’s config enables nothing for this one', async () => {
      const owner = await merchantWithKey();
      await addConfig(owner.token, [`127.0.0.1:${downstream.port}`]);
      expect((await reaching(1, () => forward(owner.token, `${downstream.url}/owner`))).status).toBe(200);
      const { token } = await merchantWithKey();
      expectProblem(await reaching(0, () => forward(token, `${downstream.url}/stranger`)), 403, 'endpoint-not-enabled');
    });

    it('a host enabled for some methods only is refused for the others, naming the method', async () => {
      const { token } = await merchantWithKey();
      await addConfig(token, [`127.0.0.1:${downstream.port}`], { methods: ['PUT'] });
      const problem = expectProblem(
        await reaching(0, () => forward(token, `${downstream.url}/method`, 'POST')),
        403,
        'endpoint-not-enabled',
      );
      expect(problem.detail).toContain('not for POST');
      expect(problem.errors[0]).toMatchObject({ message: 'method POST not enabled for this host' });
      expect((await reaching(1, () => forward(token, `${downstream.url}/method`, 'PUT'))).status).toBe(200);
    });
  });

  describe('hosts match exactly, never by suffix, prefix or parent domain', () => {
    let token: string;

    beforeAll(async () => {
      ({ token } = await merchantWithKey());
      await addConfig(token, ['api.psp.example', `127.0.0.1:${downstream.port}`]);
    });

    it.each([
      'https://evil-api.psp.example/charge',
      'https://xapi.psp.example/charge',
      'https://sub.api.psp.example/charge',
      'https://psp.example/charge',
      'https://api.psp.example.evil.example/charge',
      'https://api.psp.exampl/charge',
      'https://api.psp.example:8443/charge',
    ])('%s is not enabled by a config listing api.psp.example', async (url) => {
      const problem = expectProblem(await forward(token, url), 403, 'endpoint-not-enabled');
      expect(problem.errors[0]).toMatchObject({
        location: 'header',
        name: 'x-vault-forward-url',
        message: 'host not enabled',
      });
    });

    it.each(['https://api.psp.example/charge', 'https://API.Psp.Example:443/charge'])(
      '%s is enabled (it then fails only to resolve)',
      async (url) => {
        const result = await forward(token, url, 'POST', { 'x-vault-forward-timeout': '2' });
        expect(result.body.code).not.toBe('endpoint-not-enabled');
        expect([502, 504]).toContain(result.status);
      },
    );

    it('a port is part of the host: the listed port forwards, the one next to it does not', async () => {
      expect((await reaching(1, () => forward(token, `${downstream.url}/port`))).status).toBe(200);
      const next = `http://127.0.0.1:${downstream.port + 1}/port`;
      expectProblem(await reaching(0, () => forward(token, next)), 403, 'endpoint-not-enabled');
    });
  });
});
