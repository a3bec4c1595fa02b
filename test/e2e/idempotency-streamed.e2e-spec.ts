import { randomUUID } from 'node:crypto';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

/** Idempotency-Key with an answer that is streamed to the caller: passed on, never stored (docs/forwarding.md). */
describe('Idempotency-Key and streamed answers', () => {
  let t: TestApp;
  let downstream: Downstream;
  let token: string;

  beforeAll(async () => {
    downstream = await startHttpDownstream();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    const merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    const created = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Streamed', hosts: [`127.0.0.1:${downstream.port}`], methods: ['POST'] },
    });
    expect(created.status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
    await downstream?.close();
  });

  it('a streamed answer is not stored: the same key and request send again and are not marked replayed', async () => {
    const key = `k-${randomUUID()}`;
    const send = () =>
      http(t.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          'x-vault-forward-url': `${downstream.url}/stream`,
          'x-vault-forward-http-method': 'POST',
          'content-type': 'application/json',
          'idempotency-key': key,
        },
        rawBody: `{"ref":"${key}"}`,
      });
    const first = await send();
    expect(first.status).toBe(200);
    expect(first.text).toContain('first');
    const second = await send();
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.text).toBe(first.text);
    expect(downstream.received.filter((r) => r.body.toString().includes(key))).toHaveLength(2);
  });
});
