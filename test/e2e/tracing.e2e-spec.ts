import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createApiKey } from '../factories/api-keys';
import { createBuyer } from '../factories/buyers';
import { cardNumber, createCard } from '../factories/cards';
import { createMerchantWithConfig } from '../factories/forwarding-merchants';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { EntryPoint, startEntryPoint } from '../support/entry-point';
import { queuedForwardEnv, startScriptedDownstream, startWorker, WorkerProcess } from '../support/forward-jobs';
import { http } from '../support/http';
import { dropQueueKeys } from '../support/redis-keys';
import { entryPointEnv, startTestApp, TestApp } from '../support/test-app';
import { ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver';
import { waitFor } from '../support/wait';

// OTLP span kinds.
const SERVER = 2;
const CLIENT = 3;

/**
 * OpenTelemetry across processes (issue 25 item 6, decision 0109): the API and a worker run as real
 * processes with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a receiver this test runs; one queued forward
 * with a card, a template secret, a forwarded bearer secret and query strings is one trace from the
 * API's 202 to the downstream call and the job-end callback, and no span carries any of those values.
 */
describe.each(['redis', 'postgres'] as const)(
  'Tracing: one trace per queued forward across the API and the worker, queue on %s',
  (engine) => {
    const env = {
      ...queuedForwardEnv('test-tracing', engine),
      CURSOR_SECRET: 'test-cursor-secret-not-for-production-0123456789',
    };
    const SECRET = `psp-template-secret-${randomUUID()}`;
    const BEARER = `downstream-bearer-${randomUUID()}`;
    const QUERY = `querysecret${randomUUID().replace(/-/g, '')}`;
    const CALLBACK_QUERY = `callbacksig${randomUUID().replace(/-/g, '')}`;
    // Checked as a word of its own: four digits also occur inside ids (a UUID's group, a port).
    const CVV = '8642';
    const EXPIRY = '04/31';
    let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
    let downstream: Awaited<ReturnType<typeof startScriptedDownstream>>;
    let seed: TestApp;
    let api: EntryPoint;
    let apiUrl: string;
    let worker: WorkerProcess;
    let token: string;
    let card: { id: string; number: string };
    let methodId: string;
    let buyerId: string;

    beforeAll(async () => {
      receiver = await startOtlpReceiver();
      downstream = await startScriptedDownstream();
      // Merchant, key, card, config and secret through an in-process app without tracing; then the traced processes.
      seed = await startTestApp({ env });
      const merchant = (await createMerchantAccount(seed)).id;
      token = await (await createApiKey(seed, merchant)).token();
      const number = cardNumber('4', 16);
      card = { id: (await createCard(seed, merchant, { number, expiration_date: EXPIRY })).id, number };
      const config = await http(seed.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'Traced', hosts: [`127.0.0.1:${downstream.port}`], methods: ['POST'] },
      });
      expect(config.status).toBe(201);
      const method = await http(seed.url, `/vault-forward/configs/${config.body.id}/authentications`, {
        method: 'POST',
        token,
        body: { kind: 'template-secrets', label: 'psp key', fields: { name: 'psp_key', value: SECRET } },
      });
      expect(method.status).toBe(201);
      methodId = method.body.id as string;
      expect((await http(seed.url, '/vault-forward/webhook-secrets', { method: 'POST', token })).status).toBe(201);
      buyerId = (await createBuyer(seed, merchant)).id;
      await seed.close();

      const traced = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
      api = startEntryPoint('dist/main.js', {
        env: entryPointEnv({ ...traced, PORT: '0' }),
        ready: /API listening on (http:\/\/\S+) /,
        timeoutMs: 90_000,
      });
      [apiUrl, worker] = await Promise.all([api.started.then((m) => m[1]), startWorker(traced)]);
    }, 180_000);

    afterAll(async () => {
      for (const p of [api?.child, worker?.child])
        if (p && p.exitCode === null && p.signalCode === null) {
          p.kill('SIGTERM');
          await new Promise((resolve) => p.once('exit', resolve));
        }
      await downstream?.close();
      await receiver?.close();
      if (engine === 'redis') {
        await dropQueueKeys(env.FORWARD_QUEUE_NAME);
      }
    }, 60_000);

    it('the receiver gets one trace from both services, parents intact, downstream call and callback included, and no secret', async () => {
      const body =
        `{"pan": "{{ CARD_NUMBER_1 }}", "exp": "{{ CARD_EXPIRATION_DATE_1 }}", "cvv": "${CVV}", ` +
        `"mac": "{{ CARD_NUMBER_1 | hmac_sha256(SECRET.psp_key) }}"}`;
      const accepted = await http(apiUrl, `/vault-forward?merchant_note=${QUERY}`, {
        method: 'POST',
        token,
        headers: {
          prefer: 'respond-async',
          'x-vault-forward-url': `${downstream.url}/pay?api_key=${QUERY}`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': card.id,
          'x-vault-forward-authentications': methodId,
          'x-vault-forward-header-authorization': `Bearer ${BEARER}`,
          'x-vault-forward-callback-url': `${downstream.url}/hook?sig=${CALLBACK_QUERY}`,
          'content-type': 'application/json',
        },
        rawBody: body,
      });
      expect(accepted.status).toBe(202);
      // The card, its expiry and the CVV did reach the downstream: the spans below had the chance to carry them.
      await waitFor(() => downstream.requestsTo('/pay').length === 1 && downstream.requestsTo('/hook').length === 1, {
        timeoutMs: 60_000,
        what: 'the downstream call and the callback',
      });
      const sent = downstream.requestsTo('/pay')[0].body.toString('utf8');
      expect(sent).toContain(card.number);
      expect(sent).toContain(EXPIRY);
      expect(downstream.requestsTo('/pay')[0].headers.authorization).toBe(`Bearer ${BEARER}`);

      const root = () =>
        receiver.spans.find((s) => s.kind === SERVER && s.name === 'POST /vault-forward' && s.service.endsWith('-api'));
      const trace = () => receiver.spans.filter((s) => s.traceId === root()?.traceId);
      const clientTo = (path: string) =>
        trace().filter(
          (s) =>
            s.kind === CLIENT &&
            s.service === 'vault-forward-worker' &&
            JSON.stringify(s.attributes['url.full'] ?? s.attributes['http.url'] ?? '').includes(
              `:${downstream.port}${path}`,
            ),
        );
      const complete = () => {
        const ids = new Set(trace().map((s) => s.spanId));
        return (
          root() !== undefined &&
          clientTo('/pay').length === 1 &&
          clientTo('/hook').length === 1 &&
          trace().every((s) => s.parentSpanId === '' || ids.has(s.parentSpanId))
        );
      };
      await waitFor(complete, { timeoutMs: 30_000, what: `a complete trace; got ${receiver.spans.length} spans` });
      const spans = trace();
      process.stdout.write(
        `trace ${root()!.traceId}: ${spans.length} spans\n` +
          spans.map((s) => `  ${s.service} ${s.kind} ${s.name} ${s.spanId}<-${s.parentSpanId}`).join('\n') +
          '\n',
      );

      // One trace: both services, one root (the API's server span of the 202), every parent in the set.
      expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['vault-forward-api', 'vault-forward-worker']));
      expect(spans.filter((s) => s.parentSpanId === '')).toEqual([root()]);
      const ids = new Set(spans.map((s) => s.spanId));
      for (const s of spans) if (s.parentSpanId) expect(ids.has(s.parentSpanId)).toBe(true);
      // The queue in between: BullMQ's producer span in the API, its consumer span in the worker.
      expect(spans.some((s) => s.service === 'vault-forward-api' && /^add/.test(s.name))).toBe(true);
      expect(spans.some((s) => s.service === 'vault-forward-worker' && /^process /.test(s.name))).toBe(true);
      // The database calls made for the forward are in it too, and on Redis the queue's commands.
      const system = (s: ReceivedSpan) => s.attributes['db.system'] ?? s.attributes['db.system.name'];
      expect(spans.some((s) => system(s) === 'postgresql')).toBe(true);
      if (engine === 'redis') expect(spans.some((s) => system(s) === 'redis')).toBe(true);

      // No card number, CVV, expiry, secret, token or query string in any value of any span received (every trace).
      const forbidden: Array<[string, RegExp]> = [
        ['card number', new RegExp(card.number)],
        ['card number, last 12', new RegExp(card.number.slice(4))],
        ['CVV', new RegExp(`(?<![0-9a-z-])${CVV}(?![0-9a-z-])`, 'i')],
        ['expiry', new RegExp(EXPIRY.replace('/', '\\\\?/'))],
        ['template secret', new RegExp(SECRET)],
        ['forwarded bearer', new RegExp(BEARER)],
        ['API token', new RegExp(token.split('.')[2].slice(0, 20).replace(/[-]/g, '\\-'))],
        ['query string', new RegExp(QUERY)],
        ['callback query string', new RegExp(CALLBACK_QUERY)],
        ['any query string', /\?(api_key|sig|merchant_note)=/],
      ];
      expect(receiver.spans.length).toBeGreaterThan(spans.length - 1);
      for (const span of receiver.spans)
        for (const value of span.values)
          for (const [what, pattern] of forbidden)
            if (pattern.test(value)) throw new Error(`${what} in span "${span.name}" (${span.service}): ${value}`);
      for (const key of ['url.query', 'http.request.header.authorization'])
        expect(receiver.spans.filter((s) => key in s.attributes)).toEqual([]);
      // JSON over OTLP/HTTP, on the standard path.
      expect(receiver.paths.filter((p) => p !== 'POST /v1/traces application/json')).toEqual([]);
    }, 120_000);

    it('concurrent queued forwards, whose enqueues the API batches, each get a trace of their own', async () => {
      const before = new Set(receiver.spans.map((s) => s.spanId));
      const paths = Array.from({ length: 8 }, (_, i) => `/each/${i}`);
      const answers = await Promise.all(
        paths.map((path) =>
          http(apiUrl, '/vault-forward', {
            method: 'POST',
            token,
            headers: {
              prefer: 'respond-async',
              'x-vault-forward-url': `${downstream.url}${path}`,
              'x-vault-forward-http-method': 'POST',
            },
            body: { path },
          }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(paths.map(() => 202));
      const roots = () =>
        receiver.spans.filter((s) => !before.has(s.spanId) && s.name === 'POST /vault-forward' && !s.parentSpanId);
      // Per trace, the worker's call to the downstream: which path it went to.
      const sentIn = (traceId: string) =>
        receiver.spans
          .filter(
            (s) =>
              s.traceId === traceId &&
              s.kind === CLIENT &&
              s.service === 'vault-forward-worker' &&
              'url.full' in s.attributes,
          )
          .map((s) => /\/each\/\d+/.exec(JSON.stringify(s.attributes['url.full'] ?? ''))?.[0]);
      await waitFor(() => roots().length === paths.length && roots().every((r) => sentIn(r.traceId).length > 0), {
        timeoutMs: 60_000,
        what: 'a trace with its downstream call per forward',
      });
      // One downstream call per trace, and together every path: no trace took another's job.
      const calls = roots().map((r) => sentIn(r.traceId));
      expect(calls.every((c) => c.length === 1)).toBe(true);
      expect(calls.flat().sort()).toEqual([...paths].sort());
    }, 120_000);

    it('server spans are named by route template, never by their URL: no id or query string, a 404 by method only', async () => {
      const before = new Set(receiver.spans.map((s) => s.spanId));
      const byId = `/buyers/${buyerId}`;
      const unknown = `/no-such-route/${randomUUID()}`;
      // Found by the path it served (url.path is the request's own, as the semantic conventions have it).
      const serverSpan = (path: string) =>
        receiver.spans.find(
          (s) =>
            !before.has(s.spanId) &&
            s.kind === SERVER &&
            s.service === 'vault-forward-api' &&
            (s.attributes['url.path'] ?? s.attributes['http.target']) === path,
        );
      expect((await http(apiUrl, `/buyers?limit=5&search=${QUERY}`, { token })).status).toBe(200);
      expect((await http(apiUrl, `${byId}?expand=${QUERY}`, { token })).status).toBe(200);
      expect((await http(apiUrl, unknown, { token })).status).toBe(404);
      // A missing span here once was the id itself: the scrubber took its digits for a card number (scrub.ts).
      await waitFor(() => ['/buyers', byId, unknown].every((path) => serverSpan(path)), {
        timeoutMs: 30_000,
        what: 'the server spans of the list, the GET by id and the 404',
      }).catch(() => undefined);
      expect(['/buyers', byId, unknown].filter((path) => !serverSpan(path))).toEqual([]);
      const named = (path: string) => ({
        name: serverSpan(path)!.name,
        route: serverSpan(path)!.attributes['http.route'],
      });
      expect(named('/buyers')).toEqual({ name: 'GET /buyers', route: '/buyers' });
      expect(named(byId)).toEqual({ name: 'GET /buyers/:id', route: '/buyers/:id' });
      // No route matched: the method alone, not the path (any path, any number of them).
      expect(named(unknown)).toEqual({ name: 'GET', route: undefined });
      // And no server span of the API, of any test so far, is named by an id or a query string.
      for (const span of receiver.spans.filter((s) => s.kind === SERVER && s.service === 'vault-forward-api')) {
        expect(span.name).toMatch(/^[A-Z]+( \/[\w/:.*-]*)?$/);
        expect(span.name).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
        expect(span.name).not.toContain(QUERY);
      }
    }, 60_000);
  },
);

/**
 * A caller's trace context stays with us (decision 0118): its traceparent may parent our spans, but a
 * downstream sees a traceparent of our own span (FORWARD_TRACE_PROPAGATION=ours, the default) or none,
 * never the caller's tracestate or baggage; and client.address is the socket's, not X-Forwarded-For.
 */
describe('Tracing: the caller’s trace context is not sent on', () => {
  const env = {
    ...queuedForwardEnv('test-tracing-caller'),
    CURSOR_SECRET: 'test-cursor-secret-not-for-production-0123456789',
  };
  const TRACESTATE = `caller=state${randomUUID().slice(0, 8)}`;
  const BAGGAGE = `user.id=caller-user-${randomUUID().slice(0, 8)}`;
  const FORWARDED_FOR = '203.0.113.9';
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let downstream: Awaited<ReturnType<typeof startScriptedDownstream>>;
  const apis: Record<'ours' | 'none', { process?: EntryPoint; url?: string }> = { ours: {}, none: {} };
  let token: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    downstream = await startScriptedDownstream();
    const seed = await startTestApp({ env });
    token = (await createMerchantWithConfig(seed, downstream.port, 'Traced', ['POST'])).token;
    await seed.close();
    const traced = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100', PORT: '0' };
    await Promise.all(
      (['ours', 'none'] as const).map(async (setting) => {
        const api = startEntryPoint('dist/main.js', {
          env: entryPointEnv({ ...traced, FORWARD_TRACE_PROPAGATION: setting }),
          ready: /API listening on (http:\/\/\S+) /,
          timeoutMs: 90_000,
        });
        apis[setting].process = api;
        apis[setting].url = (await api.started)[1];
      }),
    );
  }, 180_000);

  afterAll(async () => {
    for (const { process: api } of Object.values(apis)) {
      const p = api?.child;
      if (p && p.exitCode === null && p.signalCode === null) {
        p.kill('SIGTERM');
        await new Promise((resolve) => p.once('exit', resolve));
      }
    }
    await downstream?.close();
    await receiver?.close();
    await dropQueueKeys(env.FORWARD_QUEUE_NAME);
  }, 60_000);

  /** A synchronous forward with a caller's trace context and X-Forwarded-For; what the downstream got, and the trace. */
  async function forwardWithCallerContext(setting: 'ours' | 'none') {
    const callerTrace = randomUUID().replace(/-/g, '');
    const callerSpan = randomUUID().replace(/-/g, '').slice(0, 16);
    const path = `/caller-context/${setting}/${randomUUID()}`;
    const answer = await http(apis[setting].url!, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        traceparent: `00-${callerTrace}-${callerSpan}-01`,
        tracestate: TRACESTATE,
        baggage: BAGGAGE,
        'x-forwarded-for': FORWARDED_FOR,
        'x-vault-forward-url': `${downstream.url}${path}`,
        'x-vault-forward-http-method': 'POST',
      },
      body: { ok: true },
    });
    expect(answer.status).toBe(200);
    const [sent] = downstream.requestsTo(path);
    const inTrace = (kind: number) =>
      receiver.spans.find(
        (s) =>
          s.traceId === callerTrace &&
          s.kind === kind &&
          (kind === SERVER
            ? s.name === 'POST /vault-forward'
            : JSON.stringify(s.attributes['url.full'] ?? '').includes(path)),
      );
    await waitFor(() => inTrace(SERVER) !== undefined && inTrace(CLIENT) !== undefined, {
      timeoutMs: 30_000,
      what: `the server and client spans of the forward; got ${receiver.spans.length} spans`,
    });
    return { sent, callerTrace, callerSpan, server: inTrace(SERVER)!, client: inTrace(CLIENT)! };
  }

  function expectNothingOfTheCaller({ sent, server }: Awaited<ReturnType<typeof forwardWithCallerContext>>) {
    expect(sent.headers.tracestate).toBeUndefined();
    expect(sent.headers.baggage).toBeUndefined();
    expect(JSON.stringify(sent.headers)).not.toContain(FORWARDED_FOR);
    // The trace records the socket's address, and nothing of the caller's tracestate or baggage.
    expect(server.attributes['client.address']).toBe('127.0.0.1');
    for (const span of receiver.spans)
      for (const value of span.values)
        for (const secret of [TRACESTATE, BAGGAGE.split('=')[1], FORWARDED_FOR]) expect(value).not.toContain(secret);
  }

  it('ours (the default): the caller’s traceparent parents our spans; downstream, a traceparent of our client span only', async () => {
    const seen = await forwardWithCallerContext('ours');
    expect(seen.server.parentSpanId).toBe(seen.callerSpan);
    expect(seen.sent.headers.traceparent).toBe(`00-${seen.callerTrace}-${seen.client.spanId}-01`);
    expect(seen.client.spanId).not.toBe(seen.callerSpan);
    expectNothingOfTheCaller(seen);
  }, 60_000);

  it('none: the downstream gets no trace context at all; the forward is traced all the same', async () => {
    const seen = await forwardWithCallerContext('none');
    expect(seen.sent.headers.traceparent).toBeUndefined();
    expect(seen.server.parentSpanId).toBe(seen.callerSpan);
    expectNothingOfTheCaller(seen);
  }, 60_000);
});

describe('Tracing off', () => {
  it('with OTEL_EXPORTER_OTLP_ENDPOINT unset, the entry points load no OpenTelemetry module', () => {
    // What the entry points load first, and what of the queue and shutdown asks whether tracing is on.
    const probe = spawnSync(
      process.execPath,
      [
        '-e',
        "require('./dist/platform/telemetry/api-tracing'); require('./dist/platform/telemetry/worker-tracing');" +
          "require('./dist/platform/telemetry/route-spans');" +
          "require('./dist/platform/job-queue/engine'); require('./dist/platform/job-queue/forward-queue');" +
          "require('./dist/app/bootstrap/shutdown');" +
          'process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((k) => /opentelemetry|bullmq-otel/.test(k))));',
      ],
      { env: { PATH: process.env.PATH }, encoding: 'utf8' },
    );
    expect(probe.stderr).toBe('');
    expect(JSON.parse(probe.stdout)).toEqual([]);
    // And with it set, the same files do load the SDK (the probe can fail).
    const on = spawnSync(
      process.execPath,
      [
        '-e',
        "require('./dist/platform/telemetry/worker-tracing');" +
          "process.stdout.write(String(Object.keys(require.cache).some((k) => k.includes('@opentelemetry/sdk-node'))));" +
          "require('./dist/platform/telemetry/telemetry').activeTelemetry().shutdown();",
      ],
      { env: { PATH: process.env.PATH, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }, encoding: 'utf8' },
    );
    expect(on.stdout).toBe('true');
  });
});
