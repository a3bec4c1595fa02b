import { execFileSync } from 'node:child_process';
import { CallbackReceiver, startCallbackReceiver } from '../support/callback-receiver';
import { createServer, IncomingHttpHeaders, request, Server } from 'node:http';
import * as zlib from 'node:zlib';
import { cardNumber, storeCard, StoredCard } from '../factories/cards';
import { createMerchantWithToken } from '../factories/forwarding-merchants';
import { listenOnLoopback } from '../support/downstream';
import {
  endedJob,
  queuedForwardEnv,
  recordWithOutcome,
  startWorker,
  stopQueuedSetup,
  WorkerProcess,
} from '../support/forward-jobs';
import { http } from '../support/http';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { dataDump } from '../support/sink-texts';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * Decision 0137: an answer the target sends with a Content-Encoding (gzip, deflate, br, zstd) is decoded
 * before anything of it is kept: the record's answer body, an idempotent replay, a queued job's stored
 * answer and its callback hold it decoded and masked, without content-encoding. The caller of a synchronous
 * forward gets the answer as it came unless the config's rules apply (then decoded). A decompression bomb
 * is refused within the caps: not kept, a stated placeholder instead, and the service goes on.
 *
 * The test compresses with node:zlib (zstd: node:zlib where the runtime has it, else the zstd tool), and
 * decodes and searches what the service kept with code of its own.
 */

/** Whether this runtime's zlib has zstd (Node 24 does, Node 20 does not): the service decodes it only then. */
const RUNTIME_ZSTD = typeof (zlib as { zstdDecompress?: unknown }).zstdDecompress === 'function';

const SECURITY_CODE = '8352';
/** A card number the target adds to its answer on its own (not one the service filled). */
const STRAY = cardNumber('5', 16);
/** A card number the caller types into a body it compresses itself. */
const TYPED = cardNumber('3', 15);
const masked = (n: string) => `${n.slice(0, 6)}${'*'.repeat(n.length - 10)}${n.slice(-4)}`;

const ENCODE: Record<string, (data: Buffer) => Buffer> = {
  gzip: (d) => zlib.gzipSync(d),
  deflate: (d) => zlib.deflateSync(d),
  br: (d) => zlib.brotliCompressSync(d),
  zstd: (d) => {
    const compress = (zlib as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync;
    return compress ? compress(d) : execFileSync('zstd', ['-c', '-q'], { input: d });
  },
};
const CODINGS = Object.keys(ENCODE);
/** What the service decodes on this runtime; the others it keeps as not kept. */
const decodes = (coding: string) => coding !== 'zstd' || RUNTIME_ZSTD;

/** 10 MB of zeros: about 10 KB of gzip, a few bytes of brotli. */
const BOMB = Buffer.alloc(10_000_000);
const BOMBS: Record<string, Buffer> = { gzip: zlib.gzipSync(BOMB), br: zlib.brotliCompressSync(BOMB) };

/**
 * The target: /pay/{coding} answers JSON with the number it was sent, a security code and a stray number,
 * compressed with {coding}; /bomb/{coding} answers a bomb; /plain answers a small JSON. Every body it
 * received is kept (decoded when the caller compressed it).
 */
async function startTarget() {
  const received: Array<{ url: string; headers: IncomingHttpHeaders; body: Buffer }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ url: req.url!, headers: req.headers, body });
      const [, kind, coding] = req.url!.split('/');
      if (kind === 'pay') {
        const sent = JSON.parse(body.toString('utf8')) as { pan: string };
        const answer = { card: { number: sent.pan, cvv: SECURITY_CODE }, note: `ref ${STRAY}` };
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding });
        return res.end(ENCODE[coding](Buffer.from(JSON.stringify(answer))));
      }
      if (kind === 'bomb') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': coding });
        return res.end(BOMBS[coding]);
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  return { ...(await listenOnLoopback(server)), received };
}

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The bytes as they came over the wire: node:http, unlike fetch, decodes nothing. */
  body: Buffer;
}

/** POST /vault-forward with node:http, so the answer is read as it came. */
function rawForward(baseUrl: string, headers: Record<string, string>, body: Buffer | string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}/vault-forward`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The answer's body as JSON: it must be plain (no content-encoding), and parse. */
function plainJson(headers: Record<string, unknown>, body: string | Buffer): any {
  expect(headers['content-encoding']).toBeUndefined();
  return JSON.parse(body.toString());
}

/** What the service kept of a /pay answer: decoded, the filled number withheld, the stray masked, no code. */
function expectKeptPay(answer: any): void {
  expect(answer).toEqual({
    card: { number: '[Redacted]', cvv: expect.not.stringContaining(SECURITY_CODE) },
    note: `ref ${masked(STRAY)}`,
  });
}

describe('Compressed answers are decoded before they are kept (decision 0137)', () => {
  let database: IsolatedDatabase;
  let env: Record<string, string>;
  let t: TestApp;
  let worker: WorkerProcess;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let receiver: CallbackReceiver;
  /** `plain`: a config without rules (answers go to the caller as they came); `rules`: unmatched_pan mask. */
  const merchants: Record<'plain' | 'rules', { token: string; card: StoredCard }> = {} as never;
  let key = 0;

  beforeAll(async () => {
    // A database of its own: pg_dump reads only what this file wrote.
    database = await createIsolatedDatabase('compressed');
    env = { ...queuedForwardEnv('test-compressed'), DATABASE_URL: database.url };
    target = await startTarget();
    receiver = await startCallbackReceiver();
    t = await startTestApp({ env });
    worker = await startWorker(env);
    for (const kind of ['plain', 'rules'] as const) {
      const merchant = await createMerchantWithToken(t);
      const config = await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token: merchant.token,
        body: {
          display_name: `compressed ${kind}`,
          hosts: [`127.0.0.1:${target.port}`, `127.0.0.1:${receiver.port}`],
          record_bodies: true,
          ...(kind === 'rules' ? { unmatched_pan: 'mask' } : {}),
        },
      });
      expect(config.status).toBe(201);
      const secret = await http(t.url, '/vault-forward/webhook-secrets', { method: 'POST', token: merchant.token });
      expect(secret.status).toBe(201);
      merchants[kind] = { token: merchant.token, card: await storeCard(t, merchant.id) };
    }
  }, 120_000);

  afterAll(async () => {
    await stopQueuedSetup({ env, worker, t, downstream: target });
    await receiver?.close();
    await database?.drop();
  }, 60_000);

  function headersFor(kind: 'plain' | 'rules', path: string, extra: Record<string, string> = {}) {
    return {
      authorization: `Bearer ${merchants[kind].token}`,
      'x-vault-forward-url': `${target.url}${path}`,
      'x-vault-forward-http-method': 'POST',
      'x-vault-forward-payment-methods': merchants[kind].card.id,
      'content-type': 'application/json',
      ...extra,
    };
  }
  const PAY_BODY = '{"pan":"{{ CARD_NUMBER_1 }}"}';

  /** The record of request `id` through the API once its outcome and bodies are written. */
  async function record(kind: 'plain' | 'rules', id: string): Promise<Record<string, any>> {
    return (await recordWithOutcome(t.url, merchants[kind].token, id)).body as Record<string, any>;
  }

  /** A synchronous forward, then its repeat under the same Idempotency-Key: both answers as they came. */
  async function forwardTwice(kind: 'plain' | 'rules', path: string, body: string) {
    const headers = headersFor(kind, path, { 'idempotency-key': `compressed-${++key}-${Date.now()}` });
    const first = await rawForward(t.url, headers, body);
    const replay = await rawForward(t.url, headers, body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    return { first, replay };
  }

  /** A queued forward with a callback: the ended job and the callback's body. */
  async function queued(kind: 'plain' | 'rules', path: string, body: string) {
    const callback = `/cb/${++key}`;
    const accepted = await rawForward(
      t.url,
      headersFor(kind, path, {
        prefer: 'respond-async',
        'x-vault-forward-callback-url': `${receiver.url}${callback}`,
      }),
      body,
    );
    expect(accepted.status).toBe(202);
    const id = (JSON.parse(accepted.body.toString()) as { id: string }).id;
    const job = await endedJob(t.url, merchants[kind].token, id);
    expect(job.body.status).toBe('succeeded');
    const delivered = await waitFor(() => receiver.received.find((r) => r.url === callback), {
      timeoutMs: 20_000,
      what: 'the callback',
    });
    return { job: job.body, callback: JSON.parse(delivered.body) };
  }

  describe.each(CODINGS)('%s', (coding) => {
    it('synchronous: the caller gets it as it came; the record and the replay keep it decoded and masked', async () => {
      const card = merchants.plain.card;
      const { first, replay } = await forwardTwice('plain', `/pay/${coding}`, PAY_BODY);
      expect(first.status).toBe(200);
      // As it came: compressed, holding the number the service filled (the caller's own card).
      expect(first.headers['content-encoding']).toBe(coding);
      if (decodes(coding)) expect(JSON.parse(zlibDecode(coding, first.body).toString()).card.number).toBe(card.number);

      const recorded = await record('plain', first.headers['x-vault-forward-request-id'] as string);
      expect(replay.status).toBe(200);
      if (decodes(coding)) {
        expectKeptPay(JSON.parse(recorded.response_body as string));
        expectKeptPay(plainJson(replay.headers, replay.body));
      } else {
        expect(recorded.response_body).toBe(`[not kept: zstd answer: this runtime does not decode zstd]`);
        expect(replay.headers['content-encoding']).toBeUndefined();
        expect(replay.headers['x-vault-forward-not-kept']).toBe('zstd answer: this runtime does not decode zstd');
        expect(replay.body).toHaveLength(0);
      }
      for (const text of [JSON.stringify(recorded), replay.body.toString('latin1')]) {
        expect(text).not.toContain(card.number);
        expect(text).not.toContain(STRAY);
      }
    });

    it('queued: the stored answer and the callback hold it decoded and masked', async () => {
      const { job, callback } = await queued('plain', `/pay/${coding}`, PAY_BODY);
      for (const shown of [job, callback]) {
        const response = shown.response as { headers: Record<string, unknown>; body?: string; body_base64?: string };
        if (decodes(coding)) expectKeptPay(plainJson(response.headers, response.body!));
        else {
          expect(response.headers['content-encoding']).toBeUndefined();
          expect(response.headers['x-vault-forward-not-kept']).toBe('zstd answer: this runtime does not decode zstd');
          expect(response.body).toBe('');
        }
        expect(JSON.stringify(shown)).not.toContain(merchants.plain.card.number);
        expect(JSON.stringify(shown)).not.toContain(STRAY);
      }
      const recorded = await record('plain', job.attempts[0].request_id as string);
      if (decodes(coding)) expectKeptPay(JSON.parse(recorded.response_body as string));
    });

    it('under response rules: the rules read it decoded and the caller gets it decoded', async () => {
      const result = await rawForward(t.url, headersFor('rules', `/pay/${coding}`), PAY_BODY);
      if (!decodes(coding)) {
        expect(result.status).toBe(502);
        expect(JSON.parse(result.body.toString()).code).toBe('response-not-processable');
        return;
      }
      expect(result.status).toBe(200);
      const answer = plainJson(result.headers, result.body);
      // unmatched_pan mask: every number masked, the filled one too (the caller's answer, not a kept one).
      expect(answer.card.number).toBe(masked(merchants.rules.card.number));
      expect(answer.note).toBe(`ref ${masked(STRAY)}`);
    });
  });

  describe.each(Object.keys(BOMBS))('a %s bomb (10 MB of zeros)', (coding) => {
    const notKept = new RegExp(`^${coding} answer over \\d+ bytes decoded`);

    it('is passed to the caller as it came, and kept nowhere: a placeholder in the record and the replay', async () => {
      const { first, replay } = await forwardTwice('plain', `/bomb/${coding}`, PAY_BODY);
      expect(first.status).toBe(200);
      expect(first.headers['content-encoding']).toBe(coding);
      expect(first.body.equals(BOMBS[coding])).toBe(true);
      const recorded = await record('plain', first.headers['x-vault-forward-request-id'] as string);
      expect(recorded.response_body).toMatch(new RegExp(`^\\[not kept: ${coding} answer over \\d+ bytes decoded`));
      expect(replay.status).toBe(200);
      expect(replay.headers['content-encoding']).toBeUndefined();
      expect(replay.headers['x-vault-forward-not-kept']).toMatch(notKept);
      expect(replay.body).toHaveLength(0);
    });

    it('queued: the stored answer and the callback say it was not kept', async () => {
      const { job, callback } = await queued('plain', `/bomb/${coding}`, PAY_BODY);
      for (const shown of [job, callback]) {
        expect(shown.response.headers['content-encoding']).toBeUndefined();
        expect(shown.response.headers['x-vault-forward-not-kept']).toMatch(notKept);
        expect(shown.response.body).toBe('');
      }
    });

    it('under response rules: refused (502), and the service goes on', async () => {
      const result = await rawForward(t.url, headersFor('rules', `/bomb/${coding}`), PAY_BODY);
      expect(result.status).toBe(502);
      expect(JSON.parse(result.body.toString())).toMatchObject({ code: 'response-not-processable' });
      const live = await http(t.url, '/health/live');
      expect(live.status).toBe(200);
      const after = await rawForward(t.url, headersFor('rules', '/pay/gzip'), PAY_BODY);
      expect(after.status).toBe(200);
    });
  });

  it('a request body the caller compressed (content-encoding templated) is recorded decoded and masked', async () => {
    const body = zlib.gzipSync(Buffer.from(JSON.stringify({ typed: TYPED })));
    const result = await rawForward(
      t.url,
      headersFor('plain', '/plain', { 'x-vault-forward-header-content-encoding': 'gzip' }),
      body,
    );
    expect(result.status).toBe(200);
    // Sent as the caller compressed it.
    expect(target.received.at(-1)!.body.equals(body)).toBe(true);
    const recorded = await record('plain', result.headers['x-vault-forward-request-id'] as string);
    expect(JSON.parse(recorded.request_body as string)).toEqual({ typed: masked(TYPED) });
    const bomb = await rawForward(
      t.url,
      headersFor('plain', '/plain', { 'x-vault-forward-header-content-encoding': 'gzip' }),
      BOMBS.gzip,
    );
    expect(bomb.status).toBe(200);
    const bombRecord = await record('plain', bomb.headers['x-vault-forward-request-id'] as string);
    expect(bombRecord.request_body).toMatch(/^\[not kept: gzip request body over \d+ bytes decoded/);
  });

  it('the raw rows hold no clear card number', () => {
    const dump = dataDump(database.url);
    for (const number of [merchants.plain.card.number, merchants.rules.card.number, STRAY, TYPED])
      expect(dump).not.toContain(number);
  });

  it('the API and the worker are still up', async () => {
    expect((await http(t.url, '/health/live')).status).toBe(200);
    expect(worker.child.exitCode).toBeNull();
  });
});

/** Decodes `body` as `coding` with node:zlib (the test's own reading of what the target sent). */
function zlibDecode(coding: string, body: Buffer): Buffer {
  if (coding === 'gzip') return zlib.gunzipSync(body);
  if (coding === 'deflate') return zlib.inflateSync(body);
  if (coding === 'br') return zlib.brotliDecompressSync(body);
  return (zlib as unknown as { zstdDecompressSync: (b: Buffer) => Buffer }).zstdDecompressSync(body);
}
