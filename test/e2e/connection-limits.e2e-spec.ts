import { connect, Socket } from 'node:net';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { http } from '../support/http';
import { parseRawResponse } from '../support/raw-http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

const HEADERS_TIMEOUT_MS = 600;
// Room for the test's own connections from 127.0.0.1 (fetch's pool, the contract check), which count too.
const CAP = 8;
/** Another loopback address (all of 127/8 is local on Linux): the flooding client, apart from the test's own. */
const FLOODER = '127.0.0.2';

/** A raw connection that records what it got and when it was closed. */
interface Raw {
  socket: Socket;
  data: () => string;
  closed: () => boolean;
}

function open(baseUrl: string, localAddress?: string): Promise<Raw> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let closed = false;
    const socket = connect({ port: Number(port), host: hostname, localAddress });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined); // a reset counts as closed
    socket.on('close', () => (closed = true));
    socket.once('connect', () =>
      resolve({ socket, data: () => Buffer.concat(chunks).toString('latin1'), closed: () => closed }),
    );
    socket.once('error', reject);
  });
}

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

  it.each([
    ['the forward route (Node, ahead of fastify)', 'POST /vault-forward HTTP/1.1'],
    ['a fastify route', 'GET /health/live HTTP/1.1'],
  ])('%s: a client trickling header lines is answered 408 and closed within the headers timeout', async (_, line) => {
    const raw = await open(t.url);
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
    // 408, not 431: the timeout ended it, not the header size limit.
    const answer = parseRawResponse(raw.data());
    expect(answer?.status).toBe(408);
    expect(answer?.headers['content-type']).toMatch(/^application\/problem\+json/);
    await realRequestsWork();
  });

  it('an idle keep-alive connection outlives the headers timeout and serves its next request', async () => {
    const raw = await open(t.url);
    sockets.push(raw.socket);
    raw.socket.write('GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    await waitFor(() => raw.data().includes('\r\n\r\n'), { what: 'the first answer' });
    await new Promise((resolve) => setTimeout(resolve, HEADERS_TIMEOUT_MS * 3));
    expect(raw.closed()).toBe(false);
    raw.socket.write('GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n');
    await waitFor(raw.closed, { what: 'the second answer to end the connection' });
    expect(raw.data().match(/HTTP\/1\.1 200/g)).toHaveLength(2);
  });

  it('connections from one address beyond the cap are closed at once; that address keeps its open ones, others are served', async () => {
    // Keep-alive connections that each had one answer: open, idle, within the timeouts.
    const held: Raw[] = [];
    for (let i = 0; i < CAP; i++) {
      const raw = await open(t.url, FLOODER);
      sockets.push(raw.socket);
      raw.socket.write('GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
      await waitFor(() => raw.data().includes('\r\n\r\n'), { what: `answer ${i + 1}` });
      held.push(raw);
    }
    const extras: Raw[] = [];
    for (let i = 0; i < 3; i++) {
      const raw = await open(t.url, FLOODER);
      sockets.push(raw.socket);
      extras.push(raw);
    }
    await waitFor(() => extras.every((raw) => raw.closed()), { what: 'the extra connections to be closed' });
    expect(extras.map((raw) => raw.data())).toEqual(['', '', '']);
    expect(held.some((raw) => raw.closed())).toBe(false);

    // The test's own address is not the flooder's: real requests go through.
    await realRequestsWork();

    // The flooder's open connections still work, and once one closes a new one is accepted.
    const first = held[0];
    first.socket.write('GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n');
    await waitFor(first.closed, { what: 'the answered connection to close' });
    expect(first.data().match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    const again = await waitFor(
      async () => {
        const raw = await open(t.url, FLOODER);
        sockets.push(raw.socket);
        raw.socket.write('GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n');
        await waitFor(raw.closed, { what: 'the new connection to end' });
        return parseRawResponse(raw.data());
      },
      { what: 'a new connection from the flooder to be served', timeoutMs: 10_000 },
    );
    expect(again.status).toBe(200);
  });
});
