import { MetricsServer } from '../../src/platform/metrics/metrics.server';
import { createApiKey } from '../factories/api-keys';
import { createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

/** The value of one series (name plus exact label set as Prometheus prints it), or undefined. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
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

  it('serves only GET /metrics on its port, and the API has no such route', async () => {
    expect((await fetch(metricsUrl.replace('/metrics', '/other'))).status).toBe(404);
    expect((await http(t.url, '/metrics', { token })).status).toBe(404);
  });
});
