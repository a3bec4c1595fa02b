import { randomUUID } from 'node:crypto';
import { createApiKey, TestKey } from '../factories/api-keys';
import { expectProblem, http } from '../support/http';
import { rawExchange } from '../support/raw-http';
import { startTestApp, TestApp } from '../support/test-app';

describe('Errors are RFC 9457 problem+json, framework errors included', () => {
  let t: TestApp;
  let token: string;
  let instanceKey: TestKey;

  beforeAll(async () => {
    t = await startTestApp();
    instanceKey = await createApiKey(t, null);
    token = await instanceKey.token(['merchant-accounts.read', 'merchant-accounts.write']);
  });
  afterAll(() => t.close());

  it('unknown route → 404 route-not-found, with instance and request id', async () => {
    const result = await http(t.url, '/no/such/route?x=1', { token });
    const problem = expectProblem(result, 404, 'route-not-found');
    expect(problem.instance).toBe('/no/such/route');
    expect(problem.request_id).toBe(result.headers.get('x-request-id'));
  });

  it('a request with no Accept at all gets problem+json (issue 22: no client that works today changes)', async () => {
    const result = await rawExchange(t.url, [
      `GET /no/such/route HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n`,
    ]);
    expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(result.text)).toMatchObject({ type: '/errors/route-not-found', code: 'route-not-found' });
  });

  it('Accept: application/json gets Gr4vy’s error body from every place errors are rendered (issue 22)', async () => {
    const json = { accept: 'application/json' };
    // Gr4vy's code for the status (417 has none in Gr4vy's API: ours stays); ours is each detail's type.
    const gr4vyError = (code: string, status: number) => ({
      type: 'error',
      code,
      status,
      message: expect.any(String),
      details: expect.any(Array),
    });
    // The ProblemFilter (Nest): an unknown route, then a validation problem with its pointers.
    const unknown = await http(t.url, '/no/such/route', { token, headers: json });
    expect(unknown.headers.get('content-type')).toMatch(/^application\/json/);
    expect(unknown.headers.get('vary')).toMatch(/accept/i);
    expect(unknown.body).toEqual(gr4vyError('not_found', 404));
    const invalid = await http(t.url, '/merchant-accounts', {
      method: 'POST',
      token,
      headers: json,
      body: { id: 'Not A Slug!', display_name: 'x', surprise: 1 },
    });
    expect(invalid.body).toEqual(gr4vyError('bad_request', 400));
    expect(invalid.body.details).toEqual(
      expect.arrayContaining([
        { location: 'body', type: 'validation-failed', pointer: '/id', message: expect.any(String) },
        { location: 'body', type: 'validation-failed', pointer: '/surprise', message: expect.any(String) },
      ]),
    );
    // The body parser (fastify), the Expect check (Node's server) and the forward route (ahead of Nest).
    const badJson = await http(t.url, '/merchant-accounts', {
      method: 'POST',
      token,
      headers: { ...json, 'content-type': 'application/json' },
      rawBody: '{"id":',
    });
    expect(badJson.body).toEqual({
      ...gr4vyError('bad_request', 400),
      details: [{ location: 'body', type: 'invalid-json', pointer: '', message: 'does not parse as JSON' }],
    });
    const expectation = await rawExchange(t.url, [
      'GET /merchant-accounts HTTP/1.1\r\nhost: localhost\r\naccept: application/json\r\n' +
        'expect: 200-ok\r\nconnection: close\r\n\r\n',
    ]);
    expect(expectation.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(expectation.text)).toEqual({
      ...gr4vyError('expectation-failed', 417),
      details: [{ location: 'header', type: 'expectation-failed', pointer: 'expect', message: expect.any(String) }],
    });
    const forward = await http(t.url, '/vault-forward', {
      method: 'POST',
      token: await instanceKey.token(),
      headers: { ...json, 'x-merchant-account-id': `missing-${randomUUID().slice(0, 8)}` },
    });
    expect(forward.headers.get('x-vault-forward-error')).toBe('true');
    // A merchant account that does not exist (whatever other test files made, under names of their own).
    expect(forward.body).toEqual({
      ...gr4vyError('bad_request', 400),
      details: [
        {
          location: 'header',
          type: 'merchant-account-unknown',
          pointer: 'x-merchant-account-id',
          message: expect.any(String),
        },
      ],
    });
  });

  it('unknown route without a token is still 404 problem+json, not 401 (the router answers first)', async () => {
    expectProblem(await http(t.url, '/nope'), 404, 'route-not-found');
  });

  it.each([
    '/dashboard/../x',
    '/dashboard/../../etc/passwd',
    '/dashboard/%2e%2e/x',
    '/dashboard/./index.html',
    '/dashboard//index.html',
    '/dashboard/.env',
    '/dashboard/assets/..%2f..%2fpackage.json',
  ])(
    'a dashboard path that is not plain (%s) → 404 route-not-found, like any missing file (issue 19)',
    async (path) => {
      // The bundle is served, plain paths included, so the 404 is the dashboard's answer, not the absence of the route.
      const index = await http(t.url, '/dashboard/');
      expect(index.status).toBe(200);
      const script = /src="(\/dashboard\/assets\/[^"]+)"/.exec(index.text)![1];
      expect((await http(t.url, `${script}?v=1`)).status).toBe(200);
      const result = await rawExchange(t.url, [`GET ${path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n`]);
      expect(result.status).toBe(404);
      expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(result.text)).toMatchObject({ status: 404, code: 'route-not-found' });
    },
  );

  it('malformed JSON → 400 invalid-json naming the body', async () => {
    const result = await http(t.url, '/merchant-accounts', {
      method: 'POST',
      token,
      headers: { 'content-type': 'application/json' },
      rawBody: '{"id": "acme", ',
    });
    const problem = expectProblem(result, 400, 'invalid-json');
    expect(problem.errors).toEqual([{ location: 'body', name: 'body', message: expect.any(String) }]);
  });

  it('a JSON body that is not an object → 400 validation-failed', async () => {
    const result = await http(t.url, '/merchant-accounts', { method: 'POST', token, body: ['acme'] });
    expectProblem(result, 400, 'validation-failed');
  });

  it('body over 1 MiB → 413 payload-too-large', async () => {
    const result = await http(t.url, '/merchant-accounts', {
      method: 'POST',
      token,
      body: { id: 'big', display_name: 'x'.repeat(1024 * 1024 + 10) },
    });
    expectProblem(result, 413, 'payload-too-large');
  });

  it.each(['application/xml', 'text/plain'])(
    'content-type %s → 415 unsupported-media-type naming the header',
    async (type) => {
      const result = await http(t.url, '/merchant-accounts', {
        method: 'POST',
        token,
        headers: { 'content-type': type },
        rawBody: '<merchant/>',
      });
      const problem = expectProblem(result, 415, 'unsupported-media-type');
      expect(problem.errors).toEqual([expect.objectContaining({ location: 'header', name: 'content-type' })]);
    },
  );

  it('invalid fields → 400 validation-failed listing each field with its location', async () => {
    const result = await http(t.url, '/merchant-accounts', {
      method: 'POST',
      token,
      body: { id: 'Not A Slug!', display_name: '' },
    });
    const problem = expectProblem(result, 400, 'validation-failed');
    const names = problem.errors.map((e: { location: string; name: string }) => `${e.location}:${e.name}`);
    expect(names).toEqual(expect.arrayContaining(['body:id', 'body:display_name']));
  });

  it('unknown body fields are refused, not ignored', async () => {
    const result = await http(t.url, '/merchant-accounts', {
      method: 'POST',
      token,
      body: { id: `m-${randomUUID().slice(0, 8)}`, display_name: 'X', colour: 'blue' },
    });
    const problem = expectProblem(result, 400, 'validation-failed');
    expect(problem.errors).toEqual([{ location: 'body', name: 'colour', message: 'should not exist' }]);
  });

  it('every problem type URI is dereferenceable', async () => {
    const list = await http(t.url, '/errors');
    expect(list.status).toBe(200);
    const codes = list.body.items.map((i: { code: string }) => i.code);
    expect(codes).toEqual(
      expect.arrayContaining(['unauthorized', 'forbidden', 'validation-failed', 'route-not-found']),
    );
    const one = await http(t.url, '/errors/validation-failed');
    expect(one.body).toMatchObject({ type: '/errors/validation-failed', status: 400, code: 'validation-failed' });
    expectProblem(await http(t.url, '/errors/no-such-problem'), 404, 'resource-not-found');
  });

  it('a caller-supplied x-request-id is echoed; a malformed one is replaced', async () => {
    const mine = `req-${randomUUID()}`;
    expect((await http(t.url, '/health/live', { headers: { 'x-request-id': mine } })).headers.get('x-request-id')).toBe(
      mine,
    );
    const replaced = (
      await http(t.url, '/health/live', { headers: { 'x-request-id': 'bad id\twith spaces' } })
    ).headers.get('x-request-id');
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
  });
});
