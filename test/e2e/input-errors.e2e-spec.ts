import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectProblem, http, HttpResult } from '../support/http';
import { rawExchange, RawResponse } from '../support/raw-http';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Issue 9, items 6 and 7: input that PostgreSQL, class-transformer or Node's parser cannot take is a
 * 4xx problem, never a 500 and never a framework's own body (which may echo the path).
 */

/** Sends the request bytes as given; the answer's body read as latin1, byte for byte. */
function raw(baseUrl: string, request: string | Buffer): Promise<RawResponse> {
  return rawExchange(baseUrl, [request], { encoding: 'latin1' });
}

function get(path: string, headers: Record<string, string> = {}): string {
  const lines = Object.entries({ host: 'localhost', connection: 'close', ...headers }).map(([k, v]) => `${k}: ${v}`);
  return `GET ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/** The problem checks of expectProblem, for a raw answer; the parsed body is returned. */
function expectRawProblem(result: RawResponse, status: number, code: string): Record<string, any> {
  expect({ status: result.status, type: result.headers['content-type'] }).toEqual({
    status,
    type: expect.stringMatching(/^application\/problem\+json/),
  });
  const body = JSON.parse(result.text);
  expect(body).toMatchObject({
    type: `/errors/${code}`,
    status,
    code,
    title: expect.any(String),
    detail: expect.any(String),
  });
  return body;
}

describe('Malformed input is a 4xx problem (issue 9, items 6 and 7)', () => {
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

  /** The problem must not repeat what the caller sent (a path, a value) outside `instance`. */
  function expectNoEcho(result: HttpResult | RawResponse, ...inputs: string[]) {
    const { instance: _instance, ...rest } = JSON.parse(result.text) as Record<string, unknown>;
    const text = JSON.stringify(rest);
    for (const input of inputs) expect(text).not.toContain(input);
  }

  describe('item 6: a NUL byte in a string (PostgreSQL refuses 0x00) → 400 validation-failed naming the field', () => {
    it.each([
      ['display_name', { display_name: 'Ann\u0000ie' }],
      ['external_identifier', { display_name: 'Annie', external_identifier: 'ext-\u0000-NULMARK' }],
    ])('POST /buyers with NUL in %s', async (field, body) => {
      const result = await http(t.url, '/buyers', { method: 'POST', token, body });
      const problem = expectProblem(result, 400, 'validation-failed');
      expect(problem.errors).toEqual([{ location: 'body', name: field, message: expect.stringMatching(/NUL/) }]);
      expectNoEcho(result, 'NULMARK', 'Ann');
    });

    it('a NUL nested in an array of a body (vault-forward config hosts)', async () => {
      const result = await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'x', hosts: ['api.example.com', 'a\u0000b.example.com'], methods: ['POST'] },
      });
      const problem = expectProblem(result, 400, 'validation-failed');
      expect(problem.errors).toEqual([{ location: 'body', name: 'hosts.1', message: expect.stringMatching(/NUL/) }]);
    });

    it('a lone UTF-16 surrogate (which UTF-8 cannot carry to PostgreSQL) → 400 naming the field', async () => {
      // JSON.stringify escapes a lone surrogate as \ud800, which JSON.parse turns back into one.
      const result = await http(t.url, '/buyers', { method: 'POST', token, body: { display_name: 'a\ud800b' } });
      const problem = expectProblem(result, 400, 'validation-failed');
      expect(problem.errors).toEqual([
        { location: 'body', name: 'display_name', message: expect.stringMatching(/surrogate/) },
      ]);
    });

    it.each([
      ['a NUL', '{"metadata":{"a\\u0000b":"v"}}', 'metadata.a\\u0000b', /NUL/],
      ['a lone surrogate', '{"metadata":{"\\ud800":"v"}}', 'metadata.\\ud800', /surrogate/],
    ])(
      '%s in a key of a free-form object (checkout metadata) → 400 naming the key, escaped',
      async (_, text, name, why) => {
        const result = await http(t.url, '/checkout/sessions', {
          method: 'POST',
          token,
          headers: { 'content-type': 'application/json' },
          rawBody: text,
        });
        const problem = expectProblem(result, 400, 'validation-failed');
        expect(problem.errors).toEqual([{ location: 'body', name, message: expect.stringMatching(why) }]);
        expect(await t.db.query('SELECT 1 FROM checkout_sessions WHERE merchant_account_id = $1', [merchant])).toEqual(
          [],
        );
      },
    );

    it.each(['search', 'external_identifier'])('GET /buyers?%s=%00', async (name) => {
      const result = await http(t.url, `/buyers?${name}=%00`, { token });
      const problem = expectProblem(result, 400, 'validation-failed');
      expect(problem.errors).toEqual([{ location: 'query', name, message: expect.stringMatching(/NUL/) }]);
    });

    it.each([
      ['/merchant-accounts/%00', () => instanceToken],
      ['/vault-forward/requests/%00', () => token],
      ['/buyers/%00', () => token],
      ['/payment-methods/%00', () => token],
      ['/vault-forward/configs/%00', () => token],
    ])('GET %s → 400 naming the path parameter', async (path, tokenOf) => {
      const result = await http(t.url, path, { token: tokenOf() });
      const problem = expectProblem(result, 400, 'validation-failed');
      expect(problem.errors).toEqual([{ location: 'path', name: 'id', message: expect.stringMatching(/NUL/) }]);
    });

    it('PUT /merchant-accounts/%00 with a NUL in the body too names both', async () => {
      const result = await http(t.url, '/merchant-accounts/x%00y', {
        method: 'PUT',
        token: instanceToken,
        body: { display_name: '\u0000' },
      });
      expectProblem(result, 400, 'validation-failed');
    });
  });

  describe('item 6: JSON nested 5,000 levels deep (class-transformer recursion) → 400', () => {
    it.each([
      ['arrays', '['.repeat(5000) + ']'.repeat(5000)],
      ['objects', '{"a":'.repeat(5000) + '1' + '}'.repeat(5000)],
    ])('in %s', async (_kind, nested) => {
      const result = await http(t.url, '/buyers', {
        method: 'POST',
        token,
        headers: { 'content-type': 'application/json' },
        rawBody: `{"display_name":"deep","external_identifier":${nested}}`,
      });
      const problem = expectProblem(result, 400, 'json-too-deep');
      expect(problem.errors).toEqual([{ location: 'body', name: 'body', message: expect.stringMatching(/nest/) }]);
    });

    it('nesting up to the bound is parsed and validated as usual; brackets inside strings do not count', async () => {
      const nested = '['.repeat(60) + ']'.repeat(60);
      const result = await http(t.url, '/buyers', {
        method: 'POST',
        token,
        headers: { 'content-type': 'application/json' },
        rawBody: `{"display_name":"${'[{'.repeat(90)}\\"[","external_identifier":${nested}}`,
      });
      const problem = expectProblem(result, 400, 'validation-failed');
      expect(new Set(problem.errors.map((e: { name: string }) => e.name))).toEqual(new Set(['external_identifier']));
    });
  });

  describe('item 6: percent-encoded spellings of POST /vault-forward', () => {
    // RFC 3986 §6.2.2.2: an encoded unreserved character is the character itself, and fastify routes
    // it so; the forward handler therefore answers it (here: 400 for the missing forwarding headers).
    it.each(['/vault%2Dforward', '/vault%2dforward', '/%76ault-forward?x=1', '/vault-forward#frag'])(
      'POST %s reaches the forward handler',
      async (path) => {
        const result = await raw(
          t.url,
          `POST ${path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\nauthorization: Bearer ${token}\r\ncontent-length: 2\r\n\r\n{}`,
        );
        const problem = expectRawProblem(result, 400, 'invalid-forward-header');
        expect(problem.errors[0]).toMatchObject({ location: 'header', name: 'x-vault-forward-url' });
        expect(result.headers['x-vault-forward-error']).toBe('true');
      },
    );

    it('a spelling the router refuses is a 400 bad-request problem, not a 500', async () => {
      const result = await raw(
        t.url,
        `POST /vault-forward%zz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
      );
      expectRawProblem(result, 400, 'bad-request');
    });
  });

  describe('item 7: errors from fastify and Node are problems too', () => {
    it.each(['/buyers/%', '/buyers/%zz', '/buyers/%E0%A4%A'])(
      'GET %s (not a valid percent-encoding) → 400 bad-request, path not echoed',
      async (path) => {
        const result = await raw(t.url, get(path, { authorization: `Bearer ${token}` }));
        const problem = expectRawProblem(result, 400, 'bad-request');
        expect(problem.instance).toBeUndefined();
        expect(result.text).not.toContain(path);
      },
    );

    it('a path parameter over 100 characters → 414 uri-too-long, not echoed, without reaching a handler', async () => {
      const id = 'LONGID'.repeat(50);
      const result = await raw(t.url, get(`/buyers/${id}`, { authorization: `Bearer ${token}` }));
      const problem = expectRawProblem(result, 414, 'uri-too-long');
      expect(problem.errors).toEqual([{ location: 'path', name: 'path', message: expect.any(String) }]);
      expect(result.text).not.toContain('LONGID');
      expect(result.headers['x-request-id']).toBeDefined();
    });

    it('a 100 KB URL → 431 header-fields-too-large problem, and the connection closes', async () => {
      const result = await raw(t.url, get(`/buyers?search=${'SECRETQ'.repeat(15_000)}`));
      const problem = expectRawProblem(result, 431, 'header-fields-too-large');
      expect(result.headers.connection).toBe('close');
      expect(result.text).not.toContain('SECRETQ');
      expect(problem.instance).toBeUndefined();
    });

    it('100 KB of headers → 431 header-fields-too-large problem', async () => {
      const result = await raw(t.url, get('/health/live', { 'x-big': 'B'.repeat(100_000) }));
      expectRawProblem(result, 431, 'header-fields-too-large');
    });

    it.each([
      ['a control byte in a header value', get('/health/live', { 'x-bad': 'a\u0001b' })],
      ['a space in a header name', get('/health/live', { 'x bad': 'v' })],
      ['a request line that is not HTTP', 'HELLO WORLD\r\n\r\n'],
      ['a bad content-length', 'POST /buyers HTTP/1.1\r\nhost: x\r\ncontent-length: abc\r\n\r\n'],
      [
        'two different content-lengths',
        'POST /buyers HTTP/1.1\r\nhost: x\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nab',
      ],
    ])('%s → 400 bad-request problem with connection: close', async (_what, request) => {
      const result = await raw(t.url, request);
      expectRawProblem(result, 400, 'bad-request');
      expect(result.headers.connection).toBe('close');
    });

    it.each(['/health/live', '/vault-forward'])(
      'an Expect other than 100-continue on %s → 417 expectation-failed problem (found by the fuzz suite)',
      async (path) => {
        const result = await raw(
          t.url,
          `POST ${path} HTTP/1.1\r\nhost: x\r\nexpect: something\r\ncontent-length: 2\r\n\r\n{}`,
        );
        const problem = expectRawProblem(result, 417, 'expectation-failed');
        expect(problem.errors).toEqual([{ location: 'header', name: 'expect', message: expect.any(String) }]);
        expect(result.headers['x-vault-forward-error']).toBe(path === '/vault-forward' ? 'true' : undefined);
      },
    );

    // The problem filter is handed the forward route by the API module (common/ imports no feature): a
    // Nest answer on that path is ours too, and must say so like the forward handler's own errors.
    it.each([
      ['/vault-forward', 'true'],
      ['/vault-%66orward?x=1', 'true'],
      ['/vault-forward/', undefined],
      ['/health/nope', undefined],
    ])('GET %s → 404 problem, x-vault-forward-error: %s', async (path, mark) => {
      const result = await raw(t.url, get(path));
      expectRawProblem(result, 404, 'route-not-found');
      expect(result.headers['x-vault-forward-error']).toBe(mark);
    });

    it('the server still serves after all that', async () => {
      expect((await http(t.url, '/health/live')).status).toBe(200);
    });
  });

  describe('issue 19: a problem repeats at most 100 characters of any input', () => {
    const MAX_ANSWER = 8 * 1024;

    it('an unknown placeholder with a 1 MB name → 400 invalid-placeholder of a few KB, the name cut with an ellipsis', async () => {
      const config = await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'Echo', hosts: ['psp.example.com'], methods: ['POST'] },
      });
      expect(config.status).toBe(201);
      const name = 'A'.repeat(1_000_000);
      const result = await http(t.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          'x-vault-forward-url': 'https://psp.example.com/charge',
          'x-vault-forward-http-method': 'POST',
          'content-type': 'application/json',
        },
        rawBody: `{"n":"{{ ${name}_1 }}"}`,
      });
      const problem = expectProblem(result, 400, 'invalid-placeholder');
      expect(result.text.length).toBeLessThan(MAX_ANSWER);
      expect(problem.detail).toContain(`{{ ${'A'.repeat(100)}… (`);
      expect(problem.errors).toEqual([
        { location: 'body', name: 'body', message: expect.stringContaining(`${'A'.repeat(100)}…`) },
      ]);
    });

    it('an unknown JSON field with a 500 KB name → 400 validation-failed of a few KB', async () => {
      const field = 'f'.repeat(500_000);
      const result = await http(t.url, '/buyers', { method: 'POST', token, body: { [field]: 1 } });
      const problem = expectProblem(result, 400, 'validation-failed');
      expect(result.text.length).toBeLessThan(MAX_ANSWER);
      expect(problem.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ location: 'body', name: expect.stringMatching(/^f{100}… \(/) }),
        ]),
      );
    });

    it('a thousand unknown JSON fields → at most 20 listed, the answer a few KB', async () => {
      const body = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`unknown_field_${i}`, i]));
      const result = await http(t.url, '/buyers', { method: 'POST', token, body });
      const problem = expectProblem(result, 400, 'validation-failed');
      expect(result.text.length).toBeLessThan(MAX_ANSWER);
      expect(problem.errors).toHaveLength(20);
    });
  });
});
