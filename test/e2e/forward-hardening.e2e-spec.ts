import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { InflightBytes } from '../../src/modules/forwarding/sending/inflight-bytes';
import { createApiKey } from '../factories/api-keys';
import { cardNumber, createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { checkedFetch } from '../support/checked-clients';
import { expectProblem, http, HttpResult } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/** A downstream whose timing the tests control, recording what reached it. */
interface Target {
  url: string;
  received: Array<{ path: string; bytes: number }>;
  /** Answers every request held at /hold. */
  releaseHeld(): void;
  heldCount(): number;
  /** Per stalled request, in order: whether its headers had gone out when the forward closed the connection. */
  closedStalls: Array<{ path: string; headersSent: boolean }>;
  close(): Promise<void>;
}

async function startTarget(): Promise<Target> {
  const received: Target['received'] = [];
  const closedStalls: Target['closedStalls'] = [];
  let held: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      const path = req.url!.split('?')[0];
      received.push({ path, bytes });
      if (path === '/hold') {
        held.push(res);
        return;
      }
      if (path === '/headers-late-then-stall') {
        // The status line and headers at 0.9 s, then nothing: the body never comes.
        const timer = setTimeout(() => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.flushHeaders();
        }, 900);
        res.on('close', () => {
          clearTimeout(timer);
          closedStalls.push({ path, headersSent: res.headersSent });
        });
        return;
      }
      if (path === '/late-some-then-stall') {
        // Headers and a first line at 0.8 s, then nothing: an idle timer alone would wait on.
        const timer = setTimeout(() => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('first\n');
        }, 800);
        res.on('close', () => {
          clearTimeout(timer);
          closedStalls.push({ path, headersSent: res.headersSent });
        });
        return;
      }
      if (path === '/some-then-stall') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    releaseHeld: () => {
      for (const res of held) res.writeHead(200, { 'content-type': 'application/json' }).end('{"held":true}');
      held = [];
    },
    heldCount: () => held.length,
    closedStalls,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const KIB = 1024;
const MERCHANT_LIMIT = 1536 * KIB;

describe('POST /vault-forward hardening (issue 9)', () => {
  let t: TestApp;
  let target: Target;
  let merchantA: string;
  let merchantB: string;
  let tokenA: string;
  let tokenB: string;
  let cjkCard: string;

  beforeAll(async () => {
    target = await startTarget();
    const host = new URL(target.url).host;
    t = await startTestApp({
      env: {
        FORWARD_INSECURE_HOSTS: '127.0.0.1',
        FORWARD_MAX_INFLIGHT_BYTES_PER_MERCHANT: String(MERCHANT_LIMIT),
        FORWARD_MAX_INFLIGHT_BYTES: String(8 * 1024 * KIB),
      },
    });
    merchantA = (await createMerchantAccount(t)).id;
    merchantB = (await createMerchantAccount(t)).id;
    tokenA = await (await createApiKey(t, merchantA)).token();
    tokenB = await (await createApiKey(t, merchantB)).token();
    for (const token of [tokenA, tokenB]) {
      const config = await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'Target', hosts: [host], methods: ['POST', 'GET'] },
      });
      expect(config.status).toBe(201);
    }
    // 200 characters of CJK: 600 bytes of UTF-8 each time it is filled.
    cjkCard = (await createCard(t, merchantA, { cardholder_name: '山田太郎'.repeat(50) })).id;
  });

  afterAll(async () => {
    target.releaseHeld();
    await t.close();
    await target.close();
  });

  function forward(
    token: string,
    path: string,
    options: { body?: string | Buffer; headers?: Record<string, string>; contentType?: string } = {},
  ): Promise<HttpResult> {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${target.url}${path}`,
        'x-vault-forward-http-method': 'POST',
        'content-type': options.contentType ?? 'application/json',
        ...options.headers,
      },
      rawBody: options.body ?? '{}',
    });
  }

  const inflight = () => t.get(InflightBytes);

  describe('item 2: the filled body is capped, and bytes in flight are bounded', () => {
    it('a fill that would pass 2 MiB → 413 filled-body-too-large naming the limit, and nothing is sent', async () => {
      const before = target.received.length;
      // ~1 MB of {{CARDHOLDER_NAME_1}} (21 bytes) would fill to ~29 MB.
      const body = `{"n":"${'{{CARDHOLDER_NAME_1}}'.repeat(47_000)}"}`;
      expect(body.length).toBeLessThan(1024 * KIB);
      const result = await forward(tokenA, '/echo', { body, headers: { 'x-vault-forward-payment-methods': cjkCard } });
      const problem = expectProblem(result, 413, 'filled-body-too-large');
      expect(result.headers.get('x-vault-forward-error')).toBe('true');
      expect(problem.detail).toContain(String(2 * 1024 * KIB));
      expect(problem.detail).toContain('FORWARD_MAX_FILLED_BODY_BYTES');
      expect(problem.errors).toEqual([expect.objectContaining({ location: 'body', name: 'body' })]);
      expect(target.received.length).toBe(before);
      await waitFor(() => inflight().held() === 0, { what: 'the bytes to be released', timeoutMs: 10_000 });
    });

    it('a merchant over its bytes in flight → 503 with Retry-After, while another merchant still gets through', async () => {
      const big = `{"pad":"${'x'.repeat(900 * KIB)}"}`;
      const holding = forward(tokenA, '/hold', { body: big });
      await waitFor(() => target.heldCount() === 1, {
        what: 'the first forward to reach the target',
        timeoutMs: 10_000,
      });
      expect(inflight().held(merchantA)).toBeGreaterThanOrEqual(900 * KIB);

      const before = target.received.length;
      const refused = await forward(tokenA, '/echo', { body: big });
      const problem = expectProblem(refused, 503, 'forward-capacity-exceeded');
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.headers.get('x-vault-forward-error')).toBe('true');
      expect(problem.detail).toContain('FORWARD_MAX_INFLIGHT_BYTES_PER_MERCHANT');
      expect(problem.detail).toContain(String(MERCHANT_LIMIT));
      expect(problem.errors).toEqual([expect.objectContaining({ location: 'body', name: 'body' })]);
      expect(target.received.length).toBe(before);

      const other = await forward(tokenB, '/echo', { body: big });
      expect(other.status).toBe(200);
      // A small forward of the full merchant still fits.
      expect((await forward(tokenA, '/echo', { body: '{}' })).status).toBe(200);

      target.releaseHeld();
      expect((await holding).status).toBe(200);
      await waitFor(() => inflight().held() === 0, { what: 'every byte to be released', timeoutMs: 10_000 });
      expect((await forward(tokenA, '/echo', { body: big })).status).toBe(200);
    });

    it('gives the bytes back on every ending: errors, a streamed answer, a caller that leaves', async () => {
      const body = `{"pad":"${'y'.repeat(100 * KIB)}"}`;
      expect((await forward(tokenA, '/echo', { body, headers: { 'x-vault-forward-timeout': 'soon' } })).status).toBe(
        400,
      );
      const streamed = await checkedFetch(t.url, '/vault-forward', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokenA}`,
          'x-vault-forward-url': `${target.url}/some-then-stall`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-timeout': '1',
        },
        body,
      });
      expect(streamed.status).toBe(200);
      await streamed.text().catch(() => undefined);
      const controller = new AbortController();
      const leaving = checkedFetch(t.url, '/vault-forward', {
        method: 'POST',
        signal: controller.signal,
        headers: {
          authorization: `Bearer ${tokenA}`,
          'x-vault-forward-url': `${target.url}/hold`,
          'x-vault-forward-http-method': 'POST',
        },
        body,
      });
      await waitFor(() => target.heldCount() === 1, { what: 'the forward to reach the target', timeoutMs: 10_000 });
      controller.abort();
      await leaving.catch(() => undefined);
      // The forward itself still holds its bodies until the target answers.
      expect(inflight().held(merchantA)).toBeGreaterThan(0);
      target.releaseHeld();
      await waitFor(() => inflight().held() === 0, { what: 'every byte to be released', timeoutMs: 10_000 });
    });
  });

  describe('item 5: x-vault-forward-timeout is the whole budget, headers and body together', () => {
    it('headers at 0.9 s, then a stalled body, with timeout 1 → 504 at the deadline', async () => {
      const stalls = target.closedStalls.length;
      const result = await forward(tokenA, '/headers-late-then-stall', { headers: { 'x-vault-forward-timeout': '1' } });
      expectProblem(result, 504, 'downstream-timeout');
      // The body never comes, so only the deadline ends the forward; it let the headers in first (not early),
      // and then closed the target's connection rather than leave it waiting.
      await waitFor(() => target.closedStalls.length > stalls, { what: 'the stalled connection to close' });
      expect(target.closedStalls.slice(stalls)).toEqual([{ path: '/headers-late-then-stall', headersSent: true }]);
    });

    it('an answer already streaming is cut at the deadline, and its record says downstream-timeout', async () => {
      const stalls = target.closedStalls.length;
      const response = await checkedFetch(t.url, '/vault-forward', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokenA}`,
          'x-vault-forward-url': `${target.url}/late-some-then-stall`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-timeout': '1',
        },
        body: '{}',
      });
      expect(response.status).toBe(200);
      const id = response.headers.get('x-vault-forward-request-id');
      // The body stalls for ever: only the deadline ends it, and the target's connection with it.
      await expect(response.text()).rejects.toThrow();
      await waitFor(() => target.closedStalls.length > stalls, { what: 'the stalled connection to close' });
      expect(target.closedStalls.slice(stalls)).toEqual([{ path: '/late-some-then-stall', headersSent: true }]);
      await waitFor(
        async () => (await http(t.url, `/vault-forward/requests/${id}`, { token: tokenA })).status === 200,
        { what: 'the record', timeoutMs: 10_000 },
      );
      const record = await http(t.url, `/vault-forward/requests/${id}`, { token: tokenA });
      expect(record.body).toMatchObject({ status: 200, error_type: 'downstream-timeout' });
    });
  });

  describe('item 7: what cannot be sent is a 400 before sending', () => {
    it('a cardholder name outside Latin-1 filled into a header → 400 naming the header, nothing sent', async () => {
      const before = target.received.length;
      const result = await forward(tokenA, '/echo', {
        headers: {
          'x-vault-forward-payment-methods': cjkCard,
          'x-vault-forward-header-x-holder': '{{ CARDHOLDER_NAME_1 }}',
        },
      });
      const problem = expectProblem(result, 400, 'invalid-forward-header');
      expect(problem.errors).toEqual([
        expect.objectContaining({ location: 'header', name: 'x-vault-forward-header-x-holder' }),
      ]);
      expect(result.text).not.toContain('山田');
      expect(target.received.length).toBe(before);
    });

    it.each([['expect', '100-continue']])(
      'x-vault-forward-header-%s → 400 naming it, nothing sent',
      async (name, value) => {
        const before = target.received.length;
        const result = await forward(tokenA, '/echo', { headers: { [`x-vault-forward-header-${name}`]: value } });
        const problem = expectProblem(result, 400, 'invalid-forward-header');
        expect(problem.errors).toEqual([
          expect.objectContaining({ location: 'header', name: `x-vault-forward-header-${name}` }),
        ]);
        expect(target.received.length).toBe(before);
      },
    );

    it.each([
      ['U+0085', '\u0085'],
      ['U+0080', '\u0080'],
      ['U+009F', '\u009f'],
    ])(
      'a C1 control character (%s) in an x-vault-forward-header-* value → 400 naming the header, nothing sent (issue 19)',
      async (_, c1) => {
        const before = target.received.length;
        const result = await forward(tokenA, '/echo', { headers: { 'x-vault-forward-header-x-note': `a${c1}b` } });
        const problem = expectProblem(result, 400, 'invalid-forward-header');
        expect(problem.errors).toEqual([
          expect.objectContaining({ location: 'header', name: 'x-vault-forward-header-x-note' }),
        ]);
        expect(target.received.length).toBe(before);
        // Latin-1 letters above the C1 block still go through.
        expect(
          (await forward(tokenA, '/echo', { headers: { 'x-vault-forward-header-x-note': 'Zoë ¡Ü!' } })).status,
        ).toBe(200);
      },
    );

    it('a cardholder name with a C1 control character (U+0080–U+009F) is refused when stored', async () => {
      for (const name of ['Ada\u0085Lovelace', 'Ada\u009fL', '\u0080']) {
        const result = await http(t.url, '/payment-methods', {
          method: 'POST',
          token: tokenA,
          body: { method: 'card', number: cardNumber(), expiration_date: '07/31', cardholder_name: name },
        });
        const problem = expectProblem(result, 400, 'validation-failed');
        expect(problem.errors).toEqual(
          expect.arrayContaining([expect.objectContaining({ location: 'body', name: 'cardholder_name' })]),
        );
      }
      const fine = await http(t.url, '/payment-methods', {
        method: 'POST',
        token: tokenA,
        body: { method: 'card', number: cardNumber(), expiration_date: '07/31', cardholder_name: 'Zoë ¡Ü! 山田' },
      });
      expect(fine.status).toBe(201);
    });
  });

  describe('item 8: the target URL is logged without its query string', () => {
    it('x-vault-forward-url appears in the request log line as the record keeps it', async () => {
      const requestId = `hardening-log-${randomUUID()}`;
      const result = await forward(tokenA, '/echo?api_key=SECRETVALUE&x=1', { headers: { 'x-request-id': requestId } });
      expect(result.status).toBe(200);
      await waitFor(() => t.logs.requestLine(requestId) !== undefined, {
        what: 'the request log line',
        timeoutMs: 10_000,
      });
      expect(t.logs.requestLine(requestId)!.req.headers['x-vault-forward-url']).toBe(`${target.url}/echo`);
      expect(t.logs.text).not.toContain('SECRETVALUE');
    });

    it('also on the other routes’ pino-http lines, and credentials in the URL go too', async () => {
      const requestId = `hardening-log-other-${randomUUID()}`;
      const result = await http(t.url, '/buyers', {
        token: tokenA,
        headers: {
          'x-request-id': requestId,
          'x-vault-forward-url': 'https://user:PASSWORDVALUE@psp.example/p?token=SECRETVALUE2',
        },
      });
      expect(result.status).toBe(200);
      await waitFor(() => t.logs.requestLine(requestId) !== undefined, {
        what: 'the request log line',
        timeoutMs: 10_000,
      });
      expect(t.logs.requestLine(requestId)!.req.headers['x-vault-forward-url']).toBe('https://psp.example/p');
      expect(t.logs.text).not.toContain('SECRETVALUE2');
      expect(t.logs.text).not.toContain('PASSWORDVALUE');
    });
  });
});
