import { http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

describe('Health and OpenAPI', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers liveness and readiness without a token, checking PostgreSQL and Redis', async () => {
    expect((await http(t.url, '/health/live')).body).toEqual({ status: 'ok' });
    const ready = await http(t.url, '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', checks: { database: 'up', redis: 'up', queue: 'up' } });
  });

  it('GET / points to the dashboard, the API reference and the problem registry, each of which answers', async () => {
    const home = await http(t.url, '/');
    expect(home.status).toBe(200);
    expect(home.body).toEqual({
      service: 'vault-forward',
      dashboard: '/dashboard/',
      docs: '/docs',
      openapi: '/openapi.json',
      errors: '/errors',
      health: '/health/ready',
    });
    for (const path of ['docs', 'openapi', 'errors', 'health'] as const) {
      expect([path, (await http(t.url, home.body[path] as string)).status]).toEqual([path, 200]);
    }
  });

  it('reports the queue engine without making readiness depend on it (queued forwarding off: disabled, still ready)', async () => {
    const off = await startTestApp({ env: { QUEUE_BACKEND: 'none' } });
    try {
      const ready = await http(off.url, '/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ok', checks: { database: 'up', redis: 'up', queue: 'disabled' } });
    } finally {
      await off.close();
    }
  });

  it('reports 503 problem+json when a dependency is down', async () => {
    const down = await startTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    try {
      const ready = await http(down.url, '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.headers.get('content-type')).toMatch(/problem\+json/);
      expect(ready.body.detail).toContain('redis');
    } finally {
      await down.close();
    }
  });

  it('describes every route, each protected one with its scope and problem responses', async () => {
    const doc = (await http(t.url, '/openapi.json')).body;
    expect(doc.openapi).toMatch(/^3\./);
    const operations: Array<{ key: string; op: any }> = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item))
        operations.push({ key: `${method.toUpperCase()} ${path}`, op });
    }
    const keys = operations.map((o) => o.key);
    expect(keys).toEqual(
      expect.arrayContaining([
        'GET /',
        'GET /health/live',
        'GET /health/ready',
        'GET /errors',
        'GET /errors/{code}',
        'POST /merchant-accounts',
        'GET /merchant-accounts',
        'GET /merchant-accounts/{id}',
        'PUT /merchant-accounts/{id}',
        'POST /buyers',
        'GET /buyers',
        'GET /buyers/{id}',
        'PUT /buyers/{id}',
        'DELETE /buyers/{id}',
        'GET /buyers/payment-methods',
        'POST /payment-methods',
        'GET /payment-methods',
        'GET /payment-methods/{id}',
        'DELETE /payment-methods/{id}',
        'POST /vault-forward',
        'GET /vault-forward/requests',
        'GET /vault-forward/requests/{id}',
        'POST /vault-forward/configs',
        'GET /vault-forward/configs',
        'GET /vault-forward/configs/{id}',
        'PUT /vault-forward/configs/{id}',
        'DELETE /vault-forward/configs/{id}',
      ]),
    );
    for (const { key, op } of operations) {
      expect(typeof op.summary).toBe('string');
      const isPublic = key.includes('/health/') || key.includes('/errors') || key === 'GET /';
      // The inbound entry takes no merchant token: its route's own caller authentication (security: []).
      const isInboundEntry = key.includes('/vault-inbound/');
      if (isInboundEntry) {
        expect(op.security).toEqual([]);
        expect(op.responses['401']?.content?.['application/problem+json']).toBeDefined();
      } else if (!isPublic) {
        expect(op['x-required-scope']).toMatch(/^[a-z-]+\.(read|write)$/);
        expect(op.responses['401']?.content?.['application/problem+json']).toBeDefined();
      }
    }
    expect(doc.components.schemas.Problem).toBeDefined();
    // List endpoints document the page envelope and their cursor/limit parameters.
    const listBuyers = doc.paths['/buyers'].get;
    expect(listBuyers.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['cursor', 'limit', 'search', 'external_identifier']),
    );
    expect(JSON.stringify(listBuyers.responses['200'])).toContain('BuyerPage');
    expect(listBuyers.responses['400'].description).toContain('/errors/invalid-cursor');
    // The forward route documents its headers and every problem it can answer with.
    const forward = doc.paths['/vault-forward'].post;
    expect(forward.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining([
        'x-vault-forward-url',
        'x-vault-forward-http-method',
        'x-vault-forward-payment-methods',
        'x-vault-forward-header-authorization',
      ]),
    );
    const described = JSON.stringify(forward.responses);
    for (const code of [
      'endpoint-not-enabled',
      'target-address-forbidden',
      'downstream-unreachable',
      'downstream-timeout',
      'invalid-placeholder',
      'unknown-forward-header',
    ]) {
      expect(described).toContain(`/errors/${code}`);
    }
    expect(doc.info.description).toContain('/errors/unauthorized');
  });

  it('serves a browsable documentation page', async () => {
    const page = await http(t.url, '/docs');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/swagger/i);
  });
});
