import { ConfigError } from '../../src/platform/config/env';
import { telemetryConfig } from '../../src/platform/config/telemetry-config';
import fastify from 'fastify';
import { nameSpansByRoute } from '../../src/platform/telemetry/route-spans';
import { REDACTED, scrubAttributes, scrubbedSpan, scrubValue } from '../../src/platform/telemetry/scrub';
import { setActiveTelemetry } from '../../src/platform/telemetry/telemetry';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';

describe('OTEL_* configuration (decision 0109)', () => {
  it('is off without an endpoint, whatever else is set', () => {
    expect(telemetryConfig({}, 'api')).toBeNull();
    expect(telemetryConfig({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, 'worker')).toBeNull();
  });

  it('names the service after the entry point unless OTEL_SERVICE_NAME says otherwise, and exports JSON to /v1/traces', () => {
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'api')).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      serviceName: 'vault-forward-api',
      protocol: 'http/json',
      exportDelayMs: 5000,
      forwardPropagation: 'ours',
    });
    expect(
      telemetryConfig(
        {
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otel.example/traces',
          OTEL_SERVICE_NAME: 'vault-eu',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        },
        'worker',
      ),
    ).toMatchObject({ tracesUrl: 'https://otel.example/traces', serviceName: 'vault-eu', protocol: 'http/protobuf' });
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, 'worker')?.serviceName).toBe(
      'vault-forward-worker',
    );
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://user:pw@collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      'OTEL_EXPORTER_OTLP_PROTOCOL',
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: 'a b' }, 'OTEL_SERVICE_NAME'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_BSP_SCHEDULE_DELAY: 'soon' }, 'OTEL_BSP_SCHEDULE_DELAY'],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', FORWARD_TRACE_PROPAGATION: 'caller' },
      'FORWARD_TRACE_PROPAGATION',
    ],
    // Refused with tracing off too: the typo is found at start, not on the day tracing is turned on.
    [{ FORWARD_TRACE_PROPAGATION: 'off' }, 'FORWARD_TRACE_PROPAGATION'],
  ])('refuses %j naming %s', (env, variable) => {
    expect(() => telemetryConfig(env, 'api')).toThrow(ConfigError);
    expect(() => telemetryConfig(env, 'api')).toThrow(new RegExp(`^${variable}: `));
  });
});

describe('ScrubbingSpanProcessor, the backstop (decision 0109)', () => {
  it('removes query strings from URLs and paths, and leaves other text alone', () => {
    expect(scrubValue('https://psp.example/pay?api_key=abc&x=1')).toBe('https://psp.example/pay');
    expect(scrubValue('/vault-forward?note=secret')).toBe('/vault-forward');
    expect(scrubValue('http://127.0.0.1:4000/hook#frag')).toBe('http://127.0.0.1:4000/hook');
    expect(scrubValue('SELECT * FROM t WHERE a = $1')).toBe('SELECT * FROM t WHERE a = $1');
    expect(scrubValue('add vault-forwards.forward')).toBe('add vault-forwards.forward');
  });

  it('replaces card numbers, bearer tokens, JWTs, webhook secrets and URL passwords wherever they are', () => {
    expect(scrubValue('pan 4111111111111111 ok')).toBe('pan 411111******1111 ok');
    expect(scrubValue('4111 1111 1111 1111')).toBe('4111 11** **** 1111');
    expect(scrubValue('378282246310005')).toBe('378282*****0005');
    expect(scrubValue('Bearer abc.def-ghi')).toBe(REDACTED);
    expect(scrubValue('token eyJhbGciOiJFUzUxMiJ9.eyJzdWIiOiJ4In0.sig-part')).toBe(`token ${REDACTED}`);
    expect(scrubValue('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBe(REDACTED);
    expect(scrubValue('postgres://app:hunter2@db:5432/vault')).toBe(`postgres://${REDACTED}@db:5432/vault`);
    // Short numbers (ports, counts, ids) stay.
    expect(scrubValue('127.0.0.1:5432 job 42')).toBe('127.0.0.1:5432 job 42');
  });

  it('keeps ids whose digits happen to run 13 long across their dashes, and still masks a card number next to one', () => {
    // 34923-4825-4332-8: 14 digits with single dashes, the shape of a card number written in groups.
    const id = 'c1a34923-4825-4332-8ed5-403c333c7a1d';
    expect(scrubValue(`/buyers/${id}`)).toBe(`/buyers/${id}`);
    expect(scrubValue(`/buyers/${id.toUpperCase()}/x`)).toBe(`/buyers/${id.toUpperCase()}/x`);
    expect(scrubValue(`${id} 4111 1111 1111 1111`)).toBe(`${id} 4111 11** **** 1111`);
    expect(scrubValue(`4111111111111111/${id}`)).toBe(`411111******1111/${id}`);
    // Digits only: UUID-shaped but no letter, so nothing says it is an id rather than card digits.
    expect(scrubValue('/p/41111111-1111-1111-1111-111111111111')).not.toContain('41111111-1111-1111');
    // A run that starts inside an id and goes on past it is masked.
    // (A leading zero is padding, no part of a number: 04111111111111111 is 4111111111111111 padded.)
    const reachingOut = scrubValue('c1a5b6c7-1234-5678-9abc-def041111111-1111-1111');
    expect(reachingOut).toBe('c1a5b6c7-1234-5678-9abc-def0411111**-****-1111');
  });

  it('drops query, header and body attributes, and redacts secret-named ones whatever their value', () => {
    expect(
      scrubAttributes({
        'url.query': 'a=1',
        'http.request.header.authorization': ['Bearer x'],
        'http.response.header.set-cookie': ['s=1'],
        'url.full': 'https://psp.example/pay?k=v',
        'card.cvv': '123',
        api_key: 'k',
        'http.response.status_code': 200,
        'db.statement': 'SELECT 1',
        list: ['4111111111111111', 3],
      }),
    ).toEqual({
      'url.full': 'https://psp.example/pay',
      'card.cvv': REDACTED,
      api_key: REDACTED,
      'http.response.status_code': 200,
      'db.statement': 'SELECT 1',
      list: ['411111******1111', 3],
    });
  });

  it('hands on a scrubbed view of the span: name, attributes, events and status message; the rest is the span', () => {
    const span = {
      name: 'GET /pay?pan=4111111111111111',
      attributes: { 'http.target': '/pay?pan=1' },
      events: [{ name: 'exception', time: [0, 0], attributes: { 'exception.message': 'bad 4111111111111111' } }],
      status: { code: 2, message: 'failed for 4111111111111111' },
      spanContext: () => ({ traceId: 't', spanId: 's', traceFlags: 1 }),
    } as unknown as ReadableSpan;
    const view = scrubbedSpan(span);
    expect(view.name).toBe('GET /pay');
    expect(view.attributes).toEqual({ 'http.target': '/pay' });
    expect(view.events[0].attributes).toEqual({ 'exception.message': 'bad 411111******1111' });
    expect(view.status).toEqual({ code: 2, message: 'failed for 411111******1111' });
    expect(view.spanContext().spanId).toBe('s');
    expect(span.attributes).toEqual({ 'http.target': '/pay?pan=1' });
  });
});

describe('Server spans named by route template (decision 0109)', () => {
  afterEach(() => setActiveTelemetry(null));

  function appWithRoutes() {
    const app = fastify();
    nameSpansByRoute(app);
    app.get('/buyers', async () => []);
    app.get('/buyers/:id', async () => ({}));
    return app;
  }

  it('hands the route template of every routed request to the tracing, never its URL; nothing for a 404', async () => {
    const routes: string[] = [];
    setActiveTelemetry({
      bullmq: null,
      capture: () => undefined,
      within: (_metadata, fn) => fn(),
      nameServerRoute: (route) => routes.push(route),
      shutdown: async () => undefined,
    });
    const app = appWithRoutes();
    for (const url of ['/buyers?search=x', '/buyers/3f9c2d1e-0000-4000-8000-000000000001', '/nowhere/42'])
      await app.inject({ method: 'GET', url });
    expect(routes).toEqual(['/buyers', '/buyers/:id']);
    await app.close();
  });

  it('adds no hook when tracing is off', async () => {
    const app = fastify();
    const addHook = jest.spyOn(app, 'addHook');
    nameSpansByRoute(app);
    expect(addHook).not.toHaveBeenCalled();
    await app.close();
  });
});
