import type { Socket } from 'node:net';
import { createForwardingMerchant, ForwardingMerchant } from '../factories/forwarding-merchants';
import { ScriptedDownstream, startScriptedDownstream } from '../support/forward-jobs';
import { checkedRawAnswers, openRaw, parseRawResponses, RawConnection } from '../support/raw-http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/** Requests Node's parser cannot read: a bad request line, a header line without a colon. */
const MALFORMED = [
  ['a bad request line', 'NOT-A-REQUEST-LINE\r\n\r\n'],
  ['an invalid header', 'GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\nno colon here\r\n\r\n'],
] as const;

const BODY = '{"number":"{{ CARD_NUMBER_1 }}"}';

describe('HTTP/1.1 pipelining on POST /vault-forward (decision 0116)', () => {
  let t: TestApp;
  let downstream: ScriptedDownstream;
  let merchant: ForwardingMerchant;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    downstream = await startScriptedDownstream();
    downstream.script('/held', [{ hold: true }]);
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    merchant = await createForwardingMerchant(t, downstream.port, 'Pipelined');
  });

  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy();
    for (const res of downstream.held.splice(0)) res.destroy();
  });

  afterAll(async () => {
    await t.close();
    await downstream.close();
  });

  /** A forward of the stored card to `path` of the downstream, as raw bytes. */
  function forwardRequest(path: string): string {
    return (
      `POST /vault-forward HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${merchant.token}\r\n` +
      `x-vault-forward-url: ${downstream.url}${path}\r\nx-vault-forward-http-method: POST\r\n` +
      `x-vault-forward-payment-methods: ${merchant.card.id}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`
    );
  }

  async function open(): Promise<RawConnection> {
    const raw = await openRaw(t.url);
    sockets.push(raw.socket);
    return raw;
  }

  /** Resolves once the service's server has handled the next request it could not parse. */
  function nextClientError(): Promise<void> {
    const server = t.app.getHttpServer();
    return new Promise((resolve) => server.once('clientError', () => resolve()));
  }

  /** The request held at /held once the forward has reached the downstream. */
  async function heldForward() {
    await waitFor(() => downstream.held.length === 1, { what: 'the forward to reach the downstream' });
    return downstream.held.shift()!;
  }

  function sentTo(path: string): number {
    return downstream.requestsTo(path).length;
  }

  it.each(MALFORMED)(
    'a forward followed on its connection by %s: the forward’s answer first, then the 400, the forward sent once',
    async (_, malformed) => {
      const before = sentTo('/held');
      const raw = await open();
      const refused = nextClientError();
      raw.socket.write(forwardRequest('/held') + malformed);
      const held = await heldForward();
      // The malformed request has been read and handled before the downstream answers the forward.
      await refused;
      held.writeHead(200, { 'content-type': 'application/json' });
      held.end('{"approved":true}');
      await waitFor(raw.closed, { what: 'the connection to close after the 400' });

      const answers = await checkedRawAnswers(t.url, [forwardRequest('/held'), malformed], raw.bytes());
      expect(answers.map((a) => a.status)).toEqual([200, 400]);
      expect(answers[0].text).toBe('{"approved":true}');
      expect(answers[0].headers['x-vault-forward-request-id']).toEqual(expect.any(String));
      expect(answers[1].headers['content-type']).toBe('application/problem+json');
      expect(answers[1].headers.connection).toBe('close');
      expect(JSON.parse(answers[1].text)).toMatchObject({ status: 400 });
      expect(sentTo('/held')).toBe(before + 1);
      expect(downstream.requestsTo('/held').at(-1)!.body.toString()).toContain(merchant.card.number);
      expect(raw.bytes().toString('latin1')).not.toContain(merchant.card.number);
    },
  );

  it('a streamed answer under way is finished before the 400 for a malformed request behind it', async () => {
    const raw = await open();
    raw.socket.write(forwardRequest('/held'));
    const held = await heldForward();
    held.writeHead(200, { 'content-type': 'text/plain' });
    held.write('first\n');
    await waitFor(() => raw.bytes().includes('first\n'), { what: 'the streamed answer to begin' });
    const refused = nextClientError();
    raw.socket.write(MALFORMED[0][1]);
    await refused;
    held.end('second\n');
    await waitFor(raw.closed, { what: 'the connection to close after the 400' });

    const answers = await checkedRawAnswers(t.url, [forwardRequest('/held'), MALFORMED[0][1]], raw.bytes());
    expect(answers.map((a) => a.status)).toEqual([200, 400]);
    expect(answers[0].text).toBe('first\nsecond\n');
  });

  it('every answer queued ahead of a malformed request is written, in order, before its 400', async () => {
    const before = { held: sentTo('/held'), echo: sentTo('/echo') };
    const raw = await open();
    const refused = nextClientError();
    const requests = [forwardRequest('/held'), forwardRequest('/echo'), MALFORMED[1][1]];
    raw.socket.write(requests.join(''));
    const held = await heldForward();
    await waitFor(() => sentTo('/echo') === before.echo + 1, { what: 'the second forward to be sent' });
    await refused;
    held.writeHead(200, { 'content-type': 'application/json' });
    held.end('{"first":true}');
    await waitFor(raw.closed, { what: 'the connection to close after the 400' });

    const answers = await checkedRawAnswers(t.url, requests, raw.bytes());
    expect(answers.map((a) => a.status)).toEqual([200, 200, 400]);
    expect(answers[0].text).toBe('{"first":true}');
    expect(JSON.parse(answers[1].text)).toHaveProperty('echo');
    expect([sentTo('/held'), sentTo('/echo')]).toEqual([before.held + 1, before.echo + 1]);
  });

  it('a pipelined forward whose own body cannot be parsed is answered 400 after the one ahead, and never sent', async () => {
    const before = { held: sentTo('/held'), echo: sentTo('/echo') };
    const raw = await open();
    const refused = nextClientError();
    const broken =
      forwardRequest('/echo').replace(/content-length: \d+\r\n\r\n.*$/s, 'transfer-encoding: chunked\r\n\r\n') +
      'not-a-chunk-size\r\n';
    raw.socket.write(forwardRequest('/held') + broken);
    const held = await heldForward();
    await refused;
    held.writeHead(200, { 'content-type': 'application/json' });
    held.end('{"approved":true}');
    await waitFor(raw.closed, { what: 'the connection to close after the 400' });

    const answers = await checkedRawAnswers(t.url, [forwardRequest('/held'), broken], raw.bytes());
    expect(answers.map((a) => a.status)).toEqual([200, 400]);
    expect([sentTo('/held'), sentTo('/echo')]).toEqual([before.held + 1, before.echo]);
  });

  it('two valid pipelined requests are both answered, in order, the forward sent once', async () => {
    const before = sentTo('/held');
    const raw = await open();
    const requests = [
      forwardRequest('/held'),
      'GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n',
    ];
    raw.socket.write(requests.join(''));
    const held = await heldForward();
    expect(parseRawResponses(raw.bytes())).toEqual([]);
    held.writeHead(200, { 'content-type': 'application/json' });
    held.end('{"approved":true}');
    await waitFor(raw.closed, { what: 'the second answer to end the connection' });

    const answers = await checkedRawAnswers(t.url, requests, raw.bytes());
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers[0].text).toBe('{"approved":true}');
    expect(sentTo('/held')).toBe(before + 1);
  });
});
