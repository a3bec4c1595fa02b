import { createServer } from 'node:http';
import { cardNumber } from '../factories/cards';
import { createMerchantWithToken } from '../factories/forwarding-merchants';
import { listenOnLoopback } from '../support/downstream';
import { EntryPoint, startEntryPoint } from '../support/entry-point';
import { http } from '../support/http';
import { send } from '../support/inbound-partner';
import { OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver';
import { stringsOf } from '../support/sink-texts';
import { entryPointEnv, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * Issue 50: nothing of an inbound request's cards is in the spans the traced API exports (OTLP), whether the request
 * went on to the upstream or was refused for a card number in its query. The compiled API (`npm run build`).
 */
describe('Inbound routes: spans', () => {
  let receiver: OtlpReceiver;
  let api: EntryPoint;
  let apiUrl: string;
  let upstream: Awaited<ReturnType<typeof listenOnLoopback>> & { bodies: string[] };
  let route: string;
  const [card, queried] = [cardNumber('37', 15), cardNumber('5', 16)];
  const CODE = '7393';

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString());
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    upstream = { ...(await listenOnLoopback(server)), bodies };
    const env = { FORWARD_INSECURE_HOSTS: '127.0.0.1' };
    // The merchant, its secret and its route through an in-process app without tracing; then the traced API.
    const seed = await startTestApp({ env });
    const merchant = await createMerchantWithToken(seed);
    expect(
      (await http(seed.url, '/vault-forward/webhook-secrets', { method: 'POST', token: merchant.token })).status,
    ).toBe(201);
    const created = await http(seed.url, '/vault-forward/inbound-routes', {
      method: 'POST',
      token: merchant.token,
      body: {
        display_name: 'Traced partner',
        upstream_url: `${upstream.url}/in`,
        caller_authentication: { kind: 'none', rate_limit: { requests: 10, per_seconds: 60 } },
        field_mappings: { json: { expiration_date: '/card/expiry', security_code: '/card/cvc' } },
      },
    });
    expect(created.status).toBe(201);
    route = created.body.id as string;
    await seed.close();
    api = startEntryPoint('dist/main.js', {
      env: entryPointEnv({
        ...env,
        PORT: '0',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
      }),
      ready: /API listening on (http:\/\/\S+) /,
      timeoutMs: 90_000,
    });
    apiUrl = (await api.started)[1];
  }, 180_000);

  afterAll(async () => {
    if (api && api.child.exitCode === null && api.child.signalCode === null) {
      api.child.kill('SIGTERM');
      await api.exited;
    }
    await upstream?.close();
    await receiver?.close();
  }, 60_000);

  it('the spans of a request sent on and of one refused hold no card number or code', async () => {
    const body = JSON.stringify({ card: { number: card, expiry: '08/31', cvc: CODE } });
    const sent = await send(`${apiUrl}/vault-inbound/${route}/bookings`, {
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(sent.status).toBe(200);
    expect(upstream.bodies.at(-1)).not.toContain(card);
    const refused = await send(`${apiUrl}/vault-inbound/${route}/bookings?pan=${queried}&cvc=${CODE}`, {
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(refused.status).toBe(422);
    await waitFor(() => receiver.spans.filter((s) => s.values.join(' ').includes('/vault-inbound/')).length >= 2, {
      timeoutMs: 20_000,
      what: 'the inbound requests’ spans',
    });
    const texts = receiver.spans.flatMap((s) => [s.name, ...s.values, ...stringsOf(s.attributes)]);
    expect(texts.length).toBeGreaterThan(10);
    for (const text of texts) {
      expect(text).not.toContain(card);
      expect(text).not.toContain(queried);
      expect(text).not.toMatch(new RegExp(`\\b${CODE}\\b`));
    }
  });
});
