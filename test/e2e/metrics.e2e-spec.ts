import { randomUUID } from 'node:crypto';
import { ForwardJobsWorkerModule } from '../../src/modules/forwarding/jobs/forward-jobs.module';
import { MetricsServer } from '../../src/platform/metrics/metrics.server';
import { createApiKey } from '../factories/api-keys';
import { createCard } from '../factories/cards';
import { createForwardingMerchant } from '../factories/forwarding-merchants';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { queuedForwardEnv, ScriptedDownstream, startScriptedDownstream, startWorker } from '../support/forward-jobs';
import { http } from '../support/http';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { dropQueueKeys } from '../support/redis-keys';
import { TcpProxy } from '../support/tcp-proxy';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/** The value of one series (name plus exact label set as Prometheus prints it), or undefined. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

/** The value of `name` with exactly `labels` (in any order), read independently of how src/ prints them. */
function valueOf(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = [...(match[2] ?? '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]);
    if (JSON.stringify(found.sort()) === wanted) return Number(match[3]);
  }
  return undefined;
}

async function scrapeOf(metricsUrl: string): Promise<string> {
  const response = await fetch(metricsUrl);
  expect(response.status).toBe(200);
  return response.text();
}

describe('GET /metrics (Prometheus, METRICS_PORT)', () => {
  let t: TestApp;
  let target: Downstream;
  let token: string;
  let cardId: string;
  let metricsUrl: string;

  beforeAll(async () => {
    target = await startHttpDownstream();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1', METRICS_PORT: '0' } });
    metricsUrl = `http://127.0.0.1:${t.get(MetricsServer).port}/metrics`;
    const merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Target', hosts: [new URL(target.url).host], methods: ['POST'] },
    });
    expect(config.status).toBe(201);
    cardId = (await createCard(t, merchant)).id;
  });

  afterAll(async () => {
    await t.close();
    await target.close();
  });

  const scrape = async () => {
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };

  const forward = (path: string) =>
    http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${target.url}${path}`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': cardId,
        'content-type': 'application/json',
      },
      rawBody: '{"n":"{{ CARD_NUMBER_1 }}"}',
    });

  it('counts forwards by outcome and error type, with our and the downstream latency', async () => {
    const before = await scrape();
    const ok = sample(before, 'vault_forward_forwards_total{status_class="2xx",error_type="none"}') ?? 0;
    const downstreamCount = sample(before, 'vault_forward_forward_duration_seconds_count{part="downstream"}') ?? 0;
    const notEnabled =
      sample(before, 'vault_forward_forwards_total{status_class="4xx",error_type="endpoint-not-enabled"}') ?? 0;

    expect((await forward('/echo')).status).toBe(200);
    expect((await forward('/status/503')).status).toBe(503);
    const refused = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: { 'x-vault-forward-url': 'https://not-enabled.example/x', 'x-vault-forward-http-method': 'POST' },
      rawBody: '{}',
    });
    expect(refused.status).toBe(403);

    const after = await scrape();
    expect(sample(after, 'vault_forward_forwards_total{status_class="2xx",error_type="none"}')).toBe(ok + 1);
    // The downstream's own 503 is its answer passed through, not an error of ours.
    expect(sample(after, 'vault_forward_forwards_total{status_class="5xx",error_type="none"}')).toBeGreaterThanOrEqual(
      1,
    );
    expect(sample(after, 'vault_forward_forwards_total{status_class="4xx",error_type="endpoint-not-enabled"}')).toBe(
      notEnabled + 1,
    );
    // Two forwards reached the downstream; the refused one did not.
    expect(sample(after, 'vault_forward_forward_duration_seconds_count{part="downstream"}')).toBe(downstreamCount + 2);
    expect(sample(after, 'vault_forward_forward_duration_seconds_count{part="total"}')).toBeGreaterThanOrEqual(3);
  });

  it('reports in-flight bytes, the record backlog and spool, cache lookups and the process, and never card data', async () => {
    const text = await scrape();
    expect(sample(text, 'vault_forward_forward_inflight_bytes')).toBe(0);
    expect(sample(text, 'vault_forward_forward_disclosures_waiting')).toBe(0);
    expect(sample(text, 'vault_forward_forward_outcomes_waiting')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'vault_forward_forward_record_spool_bytes')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'vault_forward_forward_records_database_down')).toBe(0);
    expect(text).toMatch(/^vault_forward_cache_lookups_total\{cache="[a-z-]+",result="(hit|miss)"\} \d+$/m);
    expect(text).toMatch(/^vault_forward_process_resident_memory_bytes \d+/m);
    // Labels are fixed sets (status class, problem code, cache name): no id, URL or value of a request.
    expect(text).not.toContain(cardId);
    expect(text).not.toContain(target.url);
  });

  it('counts API requests by route template, method and status class, the forward route included', async () => {
    const requests = (text: string, route: string, method: string, statusClass: string) => ({
      count: valueOf(text, 'vault_forward_http_requests_total', { route, method, status_class: statusClass }) ?? 0,
      histogram:
        valueOf(text, 'vault_forward_http_request_duration_seconds_count', {
          route,
          method,
          status_class: statusClass,
        }) ?? 0,
    });
    const watched: Array<[string, string, string]> = [
      ['/buyers/:id', 'GET', '4xx'],
      ['/buyers', 'POST', '2xx'],
      ['/vault-forward', 'POST', '2xx'],
      ['unmatched', 'GET', '4xx'],
      ['unmatched', 'other', '4xx'],
    ];
    const before = await scrape();
    const counted = (text: string) => watched.map(([route, method, status]) => requests(text, route, method, status));
    const start = counted(before);

    const unknownBuyers = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of unknownBuyers) expect((await http(t.url, `/buyers/${id}`, { token })).status).toBe(404);
    const buyer = await http(t.url, '/buyers', { method: 'POST', token, body: { display_name: 'Metrics' } });
    expect(buyer.status).toBe(201);
    expect((await forward('/echo')).status).toBe(200);
    expect((await fetch(`${t.url}/no/such/route/${randomUUID()}`)).status).toBe(404);
    // A method no route has (Node parses WebDAV's) is "other"; a path the router cannot read is "unmatched".
    expect((await fetch(`${t.url}/buyers`, { method: 'PROPFIND' })).status).toBe(404);
    expect((await fetch(`${t.url}/buyers/%zz`)).status).toBe(400);

    const after = await scrape();
    const added = counted(after).map((now, i) => ({
      count: now.count - start[i].count,
      histogram: now.histogram - start[i].histogram,
    }));
    expect(added).toEqual([
      { count: 3, histogram: 3 },
      { count: 1, histogram: 1 },
      { count: 1, histogram: 1 },
      { count: 2, histogram: 2 },
      { count: 1, histogram: 1 },
    ]);
    const seconds = valueOf(after, 'vault_forward_http_request_duration_seconds_sum', {
      route: '/vault-forward',
      method: 'POST',
      status_class: '2xx',
    });
    expect(seconds).toBeGreaterThan(0);
    // The template, never the URL: no id a request named is a label.
    for (const id of [...unknownBuyers, buyer.body.id as string]) expect(after).not.toContain(id);
    expect(after).not.toContain('/no/such/route');
    expect(after).not.toContain('%zz');
  });

  it('serves only GET /metrics on its port, and the API has no such route', async () => {
    expect((await fetch(metricsUrl.replace('/metrics', '/other'))).status).toBe(404);
    expect((await http(t.url, '/metrics', { token })).status).toBe(404);
  });
});

/**
 * The queue gauges read the rows of a database of the test's own (other files' jobs would count in the shared
 * one), reached through a proxy so the test can take PostgreSQL away from the API; the worker runs in the API's
 * process, one job at a time, so a held job keeps the next one waiting.
 */
describe.each(['redis', 'postgres'] as const)('queue gauges on the %s queue engine', (backend) => {
  const env = { ...queuedForwardEnv('test-metrics', backend), METRICS_PORT: '0', WORKER_CONCURRENCY: '1' };
  let database: IsolatedDatabase;
  let proxy: TcpProxy;
  let t: TestApp;
  let downstream: ScriptedDownstream;
  let metricsUrl: string;
  let token: string;
  let card: string;

  beforeAll(async () => {
    database = await createIsolatedDatabase('metrics');
    const url = new URL(database.url);
    proxy = await TcpProxy.start(url.hostname, Number(url.port || 5432));
    url.host = proxy.address;
    downstream = await startScriptedDownstream();
    t = await startTestApp({ env: { ...env, DATABASE_URL: url.toString() }, imports: [ForwardJobsWorkerModule] });
    metricsUrl = `http://127.0.0.1:${t.get(MetricsServer).port}/metrics`;
    const merchant = await createForwardingMerchant(t, downstream.port, 'Metrics');
    token = merchant.token;
    card = merchant.card.id;
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await downstream?.close();
    await proxy?.close();
    await database?.drop();
    if (backend === 'redis') await dropQueueKeys(env.FORWARD_QUEUE_NAME);
  });

  const queue = (path: string, headers: Record<string, string> = {}) =>
    http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        prefer: 'respond-async',
        'x-vault-forward-url': `${downstream.url}${path}`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card,
        'content-type': 'application/json',
        ...headers,
      },
      rawBody: '{"n":"{{ CARD_NUMBER_1 }}"}',
    });

  const job = async (id: string) => (await http(t.url, `/vault-forward/jobs/${id}`, { token })).body;
  const gauge = (text: string, name: string, labels: Record<string, string>) =>
    valueOf(text, `vault_forward_${name}`, labels);
  const depths = (text: string, queueName: string, states: string[]) =>
    Object.fromEntries(states.map((state) => [state, gauge(text, 'queue_depth', { queue: queueName, state })]));

  it('shows each queued forward in its state while it waits, and the callback waiting for a secret', async () => {
    const idle = await scrapeOf(metricsUrl);
    expect(depths(idle, 'forward', ['waiting', 'delayed', 'running'])).toEqual({ waiting: 0, delayed: 0, running: 0 });
    expect(depths(idle, 'callback', ['waiting', 'delayed', 'waiting_for_secret'])).toEqual({
      waiting: 0,
      delayed: 0,
      waiting_for_secret: 0,
    });
    expect(gauge(idle, 'queue_backlog', { queue: 'forward' })).toBe(0);

    // Delayed: a 503 with Retry-After puts the next attempt 5 minutes off (an Idempotency-Key lets a POST retry).
    downstream.script('/busy', [{ status: 503, headers: { 'retry-after': '300' } }]);
    const delayed = (await queue('/busy', { 'idempotency-key': randomUUID() })).body.id as string;
    await waitFor(async () => (await job(delayed)).attempts.length === 1 && (await job(delayed)).status === 'queued', {
      timeoutMs: 20_000,
      what: 'the first attempt to be retried later',
    });
    // Running: the stand-in holds the first request to /hold until the test answers it; waiting: the next job,
    // behind it (one job at a time). The running one has a callback URL and its merchant no webhook secret.
    downstream.script('/hold', [{ hold: true }, { status: 200 }]);
    const running = await queue('/hold', { 'x-vault-forward-callback-url': `${downstream.url}/callback` });
    expect(running.status).toBe(202);
    await waitFor(() => downstream.held.length === 1, { timeoutMs: 20_000, what: 'the stand-in to hold a request' });
    expect((await queue('/hold')).status).toBe(202);

    const busy = await waitFor(
      async () => {
        const text = await scrapeOf(metricsUrl);
        const seen = depths(text, 'forward', ['waiting', 'delayed', 'running']);
        // Its age grows while it waits: read by the database's clock at each scrape.
        const waitedSeconds = gauge(text, 'queue_oldest_age_seconds', { queue: 'forward', state: 'waiting' }) ?? 0;
        return seen.waiting === 1 && seen.delayed === 1 && seen.running === 1 && waitedSeconds > 0 && text;
      },
      { timeoutMs: 20_000, what: 'one job in each state, the waiting one aging' },
    );
    expect(gauge(busy, 'queue_backlog', { queue: 'forward' })).toBe(3);
    expect(gauge(busy, 'queue_backlog_oldest_age_seconds', { queue: 'forward' })).toBeGreaterThan(0);
    for (const state of ['delayed', 'running'])
      expect(gauge(busy, 'queue_oldest_age_seconds', { queue: 'forward', state })).toBeGreaterThan(0);

    downstream.held.shift()!.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    const drained = await waitFor(
      async () => {
        const text = await scrapeOf(metricsUrl);
        const forward = depths(text, 'forward', ['waiting', 'delayed', 'running']);
        const callback = gauge(text, 'queue_depth', { queue: 'callback', state: 'waiting_for_secret' });
        return forward.waiting === 0 && forward.running === 0 && forward.delayed === 1 && callback === 1 && text;
      },
      { timeoutMs: 20_000, what: 'both held jobs to end, and the callback to wait for a webhook secret' },
    );
    expect(gauge(drained, 'queue_backlog', { queue: 'callback' })).toBe(1);
    expect(gauge(drained, 'queue_backlog', { queue: 'forward' })).toBe(1);
    expect(gauge(drained, 'queue_oldest_age_seconds', { queue: 'forward', state: 'waiting' })).toBe(0);
    expect((await job(running.body.id as string)).status).toBe('succeeded');
  });

  it('answers a scrape without the queue series while PostgreSQL is away, counting the failure; back after', async () => {
    const errors = (text: string) =>
      valueOf(text, 'vault_forward_metrics_collect_errors_total', { source: 'queue_forward' }) ?? 0;
    const before = errors(await scrapeOf(metricsUrl));
    await proxy.cut();
    try {
      const text = await scrapeOf(metricsUrl);
      expect(text).not.toMatch(/^vault_forward_queue_depth\{/m);
      expect(text).not.toMatch(/^vault_forward_queue_backlog\{/m);
      expect(errors(text)).toBeGreaterThan(before);
      // The rest of the scrape is there.
      expect(text).toMatch(/^vault_forward_process_resident_memory_bytes \d+/m);
    } finally {
      await proxy.restore();
    }
    await waitFor(
      async () => gauge(await scrapeOf(metricsUrl), 'queue_depth', { queue: 'forward', state: 'delayed' }) === 1,
      { timeoutMs: 20_000, what: 'the queue series back once PostgreSQL answers' },
    );
  });

  it('the worker serves the same queue series on its own metrics port, and no request series', async () => {
    const worker = await startWorker({ ...env, DATABASE_URL: database.url });
    try {
      const metricsLine = await waitFor(
        () => /Prometheus metrics on (http:\/\/[^\s"]+\/metrics)/.exec(worker.output()),
        {
          timeoutMs: 20_000,
          what: "the worker's metrics port in its log",
        },
      );
      const text = await scrapeOf(metricsLine[1]);
      expect(gauge(text, 'queue_depth', { queue: 'forward', state: 'delayed' })).toBe(1);
      expect(gauge(text, 'queue_depth', { queue: 'callback', state: 'waiting_for_secret' })).toBe(1);
      expect(text).not.toContain('vault_forward_http_requests_total');
    } finally {
      await worker.kill();
    }
  });
});
