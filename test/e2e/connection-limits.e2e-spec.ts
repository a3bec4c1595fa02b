import type { Socket } from 'node:net';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { http } from '../support/http';
import { contractStats } from '../support/contract';
import { checkedRawAnswers, openRaw, parseRawResponses, RawConnection } from '../support/raw-http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

const HEADERS_TIMEOUT_MS = 600;
const REQUEST_TIMEOUT_MS = 1_500;
// Room for the test's own connections from 127.0.0.1 (fetch's pool, the contract check), which count too.
const CAP = 8;
/** Another loopback address (all of 127/8 is local on Linux): the flooding client, apart from the test's own. */
const FLOODER = '127.0.0.2';

const GET_LIVE = 'GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n';
const GET_LIVE_CLOSE = 'GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n';

describe('slow clients and connection floods (issue 19, defect 5)', () => {
  let t: TestApp;
  let downstream: Downstream;
  let token: string;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    downstream = await startHttpDownstream();
    t = await startTestApp({
      env: {
        FORWARD_INSECURE_HOSTS: '127.0.0.1',
        HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        HTTP_MAX_CONNECTIONS_PER_IP: String(CAP),
      },
    });
    const merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Target', hosts: [new URL(downstream.url).host], methods: ['POST'] },
    });
    expect(config.status).toBe(201);
  });

  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy();
  });

  afterAll(async () => {
    await t.close();
    await downstream.close();
  });

  /** A real forward and a real fastify route, from the test's own address. */
  async function realRequestsWork(): Promise<void> {
    const forwarded = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${downstream.url}/echo`,
        'x-vault-forward-http-method': 'POST',
        'content-type': 'application/json',
      },
      rawBody: '{"ok":true}',
    });
    expect(forwarded.status).toBe(200);
    expect((await http(t.url, '/health/live')).status).toBe(200);
  }

  /** Every answer of the connection, each held against the document; `requests[i]` is what the i-th answers. */
  async function answersOf(raw: RawConnection, requests: string[]) {
    return checkedRawAnswers(t.url, requests, raw.bytes());
  }

  /** Whether `count` whole answers have come (not checked yet: a violation must fail the test, not be waited out). */
  function answered(raw: RawConnection, count: number): boolean {
    return parseRawResponses(raw.bytes()).length === count;
  }

  it.each([
    ['the forward route (Node, ahead of fastify)', 'POST /vault-forward HTTP/1.1'],
    ['a fastify route', 'GET /health/live HTTP/1.1'],
  ])('%s: a client trickling header lines is answered 408 and closed within the headers timeout', async (_, line) => {
    const raw = await openRaw(t.url);
    sockets.push(raw.socket);
    raw.socket.write(`${line}\r\nhost: 127.0.0.1\r\n`);
    // One header line every 100 ms: each resets no idle timer, only the headers timeout ends it.
    let n = 0;
    const trickle = setInterval(() => {
      if (!raw.closed()) raw.socket.write(`x-trickle-${n++}: a\r\n`);
    }, 100);
    try {
      await waitFor(raw.closed, { what: 'the server to close the trickling connection', timeoutMs: 20_000 });
    } finally {
      clearInterval(trickle);
    }
    const checked = contractStats.checked;
    const answers = await answersOf(raw, [line]);
    expect(contractStats.checked).toBe(checked + 1);
    // 408, not 431: the timeout ended it, not the header size limit. A problem with its own code (the catalog
    // says what it means), a message for a person, and nothing of the request echoed: it never arrived whole.
    expect(answers).toHaveLength(1);
    const [answer] = answers;
    expect(answer.status).toBe(408);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(answer.headers.connection).toBe('close');
    const problem = JSON.parse(answer.text) as Record<string, unknown>;
    expect(problem).toEqual({
      type: '/errors/request-timeout',
      code: 'request-timeout',
      status: 408,
      title: 'Request timeout',
      detail: expect.stringMatching(/in time/),
    });
    const catalog = await http(t.url, '/errors/request-timeout');
    expect(catalog.body).toMatchObject({ code: 'request-timeout', status: 408, title: problem.title });
    await realRequestsWork();
  });

  it.each([
    ['the forward route (Node, ahead of fastify)', '/vault-forward', 'true'],
    ['a fastify route', '/vault-forward/configs', undefined],
  ])(
    '%s: a client trickling its body is answered 408 naming the body, within the request timeout',
    async (_, path, forwardMark) => {
      const raw = await openRaw(t.url);
      sockets.push(raw.socket);
      const head =
        `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\n` +
        `x-vault-forward-url: ${downstream.url}/echo\r\nx-vault-forward-http-method: POST\r\n` +
        'content-type: application/json\r\ncontent-length: 1000\r\n\r\n';
      raw.socket.write(head);
      // One body byte every 100 ms: the headers were in time, the request as a whole is not.
      const trickle = setInterval(() => {
        if (!raw.closed()) raw.socket.write(' ');
      }, 100);
      try {
        await waitFor(raw.closed, { what: 'the server to close the trickling connection', timeoutMs: 20_000 });
      } finally {
        clearInterval(trickle);
      }
      const answers = await answersOf(raw, [head]);
      expect(answers).toHaveLength(1);
      const [answer] = answers;
      expect(answer.status).toBe(408);
      expect(answer.headers['content-type']).toBe('application/problem+json');
      expect(answer.headers['x-vault-forward-error']).toBe(forwardMark);
      expect(JSON.parse(answer.text)).toEqual({
        type: '/errors/request-timeout',
        code: 'request-timeout',
        status: 408,
        title: 'Request timeout',
        detail: expect.stringMatching(/in time/),
        instance: path,
        errors: [{ location: 'body', name: 'body', message: expect.any(String) }],
      });
      expect(answer.text).not.toContain(token);
      await realRequestsWork();
      // The cut-off body's reader then fails with Node's ECONNRESET `aborted`: the caller's socket, no database
      // outage, so no 503 warning in the log (there was one per such request).
      expect(t.logs.lines.filter((line) => line.msg === 'request refused: unavailable')).toEqual([]);
    },
  );

  it('an idle keep-alive connection outlives the headers timeout and serves its next request', async () => {
    const raw = await openRaw(t.url);
    sockets.push(raw.socket);
    raw.socket.write(GET_LIVE);
    await waitFor(() => answered(raw, 1), { what: 'the first answer' });
    // A second connection, opened after the first went idle, starts a request it never finishes: once the
    // server has closed it for the headers timeout, the idle one has waited longer than that timeout too.
    const unfinished = await openRaw(t.url);
    sockets.push(unfinished.socket);
    unfinished.socket.write('GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\n');
    await waitFor(unfinished.closed, {
      what: 'the headers timeout to close the unfinished request',
      timeoutMs: 20_000,
    });
    expect(raw.closed()).toBe(false);
    raw.socket.write(GET_LIVE_CLOSE);
    await waitFor(raw.closed, { what: 'the second answer to end the connection' });
    const answers = await answersOf(raw, [GET_LIVE, GET_LIVE_CLOSE]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
  });

  it('connections from one address beyond the cap are closed at once; that address keeps its open ones, others are served', async () => {
    // Keep-alive connections that each had one answer: open, idle, within the timeouts.
    const held: RawConnection[] = [];
    for (let i = 0; i < CAP; i++) {
      const raw = await openRaw(t.url, FLOODER);
      sockets.push(raw.socket);
      raw.socket.write(GET_LIVE);
      await waitFor(() => answered(raw, 1), { what: `answer ${i + 1}` });
      expect((await answersOf(raw, [GET_LIVE])).map((a) => a.status)).toEqual([200]);
      held.push(raw);
    }
    const extras: RawConnection[] = [];
    for (let i = 0; i < 3; i++) {
      const raw = await openRaw(t.url, FLOODER);
      sockets.push(raw.socket);
      extras.push(raw);
    }
    await waitFor(() => extras.every((raw) => raw.closed()), { what: 'the extra connections to be closed' });
    // Destroyed unanswered: no bytes, so no answer to hold against the document.
    expect(extras.map((raw) => raw.bytes().length)).toEqual([0, 0, 0]);
    expect(held.some((raw) => raw.closed())).toBe(false);

    // The test's own address is not the flooder's: real requests go through.
    await realRequestsWork();

    // The flooder's open connections still work, and once one closes a new one is accepted.
    const first = held[0];
    first.socket.write(GET_LIVE_CLOSE);
    await waitFor(first.closed, { what: 'the answered connection to close' });
    expect((await answersOf(first, [GET_LIVE, GET_LIVE_CLOSE])).map((a) => a.status)).toEqual([200, 200]);
    const again = await waitFor(
      async () => {
        const raw = await openRaw(t.url, FLOODER);
        sockets.push(raw.socket);
        raw.socket.write(GET_LIVE_CLOSE);
        await waitFor(raw.closed, { what: 'the new connection to end' });
        return answered(raw, 1) && raw;
      },
      { what: 'a new connection from the flooder to be served', timeoutMs: 10_000 },
    );
    expect((await answersOf(again, [GET_LIVE_CLOSE])).map((a) => a.status)).toEqual([200]);
  });
});
