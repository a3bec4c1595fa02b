import { randomUUID } from 'node:crypto';
import { asKept } from '../support/card-spellings';
import { createForwardingMerchant, ForwardingMerchant } from '../factories/forwarding-merchants';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * Issue 19's mutation audit: what one merchant account did is never seen by another, whatever ids or
 * keys the other sends. Two merchants forward to the same downstream with their own cards.
 */
describe('Merchant isolation: forward records and Idempotency-Key', () => {
  let t: TestApp;
  let downstream: Downstream;
  let a: ForwardingMerchant;
  let b: ForwardingMerchant;

  const merchant = () => createForwardingMerchant(t, downstream.port, 'Isolation test');

  beforeAll(async () => {
    downstream = await startHttpDownstream();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    a = await merchant();
    b = await merchant();
  });
  afterAll(async () => {
    await t?.close();
    await downstream?.close();
  });

  function forward(m: ForwardingMerchant, body: string, key?: string) {
    const headers: Record<string, string> = {
      'x-vault-forward-url': `${downstream.url}/pay`,
      'x-vault-forward-http-method': 'POST',
      'x-vault-forward-payment-methods': m.card.id,
      'content-type': 'application/json',
    };
    if (key !== undefined) headers['idempotency-key'] = key;
    return http(t.url, '/vault-forward', { method: 'POST', token: m.token, headers, rawBody: body });
  }

  const listIds = async (m: ForwardingMerchant) => {
    const page = await http(t.url, '/vault-forward/requests?limit=100', { token: m.token });
    expect(page.status).toBe(200);
    return (page.body.items as Array<{ id: string }>).map((item) => item.id);
  };

  it("another merchant's record id is 404, the same answer as an unknown id; each list shows its own records only", async () => {
    const sent = await forward(a, `{"n":"{{ CARD_NUMBER_1 }}","ref":"${randomUUID()}"}`);
    expect(sent.status).toBe(200);
    const recordId = sent.headers.get('x-vault-forward-request-id')!;
    expect(recordId).toBeTruthy();
    const ownB = (await forward(b, `{"n":"{{ CARD_NUMBER_1 }}","ref":"${randomUUID()}"}`)).headers.get(
      'x-vault-forward-request-id',
    )!;
    // Records are written after the answer: wait until the owner sees its own.
    await waitFor(
      async () => (await http(t.url, `/vault-forward/requests/${recordId}`, { token: a.token })).status === 200,
      {
        timeoutMs: 30_000,
        what: "merchant A's record",
      },
    );
    await waitFor(
      async () => (await http(t.url, `/vault-forward/requests/${ownB}`, { token: b.token })).status === 200,
      {
        timeoutMs: 30_000,
        what: "merchant B's record",
      },
    );

    const theirs = await http(t.url, `/vault-forward/requests/${recordId}`, { token: b.token });
    const unknown = await http(t.url, `/vault-forward/requests/${randomUUID()}`, { token: b.token });
    const problem = expectProblem(theirs, 404, 'vault-forward-request-not-found');
    expect(problem.detail).toBe(`No forward "${recordId}" exists in this merchant account.`);
    expectProblem(unknown, 404, 'vault-forward-request-not-found');
    expect(theirs.text).not.toContain('/pay');

    const listA = await listIds(a);
    const listB = await listIds(b);
    expect(listA).toContain(recordId);
    expect(listA).not.toContain(ownB);
    expect(listB).toContain(ownB);
    expect(listB).not.toContain(recordId);

    // A cursor is bound to the merchant account that was given it: B cannot page through A's list with it.
    await forward(a, `{"ref":"${randomUUID()}"}`);
    const cursor = await waitFor(
      async () => (await http(t.url, '/vault-forward/requests?limit=1', { token: a.token })).body.next_cursor as string,
      { timeoutMs: 30_000, what: "a second page of merchant A's records" },
    );
    const query = `/vault-forward/requests?limit=1&cursor=${encodeURIComponent(cursor)}`;
    expect((await http(t.url, query, { token: a.token })).status).toBe(200);
    expectProblem(await http(t.url, query, { token: b.token }), 400, 'invalid-cursor');

    // The detail quotes at most 64 characters of an id (ids are UUIDs; a path parameter may be 100).
    const long = 'x'.repeat(90);
    const tooLong = expectProblem(
      await http(t.url, `/vault-forward/requests/${long}`, { token: b.token }),
      404,
      'vault-forward-request-not-found',
    );
    expect(tooLong.detail).toBe(`No forward "${'x'.repeat(64)}" exists in this merchant account.`);
  });

  it('the same Idempotency-Key for two merchants: each request is sent once and replays its own answer, never the other’s', async () => {
    const key = `k-${randomUUID()}`;
    // Each merchant's own literal: a replay shows it, while the echoed card number is withheld (decision 0113).
    const bodyOf = (m: ForwardingMerchant) => `{"n":"{{ CARD_NUMBER_1 }}","ref":"${key}","own":"${m.card.id}"}`;
    const hits = () => downstream.received.filter((r) => r.body.toString().includes(key)).length;

    const firstA = await forward(a, bodyOf(a), key);
    expect(firstA.status).toBe(200);
    expect(firstA.headers.get('idempotent-replayed')).toBeNull();
    expect(firstA.text).toContain(a.card.number);

    const firstB = await forward(b, bodyOf(b), key);
    expect(firstB.status).toBe(200);
    expect(firstB.headers.get('idempotent-replayed')).toBeNull();
    expect(firstB.text).toContain(b.card.number);
    expect(firstB.text).not.toContain(a.card.number);
    expect(hits()).toBe(2);

    for (let round = 0; round < 3; round++) {
      const replayB = await forward(b, bodyOf(b), key);
      expect(replayB.status).toBe(200);
      expect(replayB.headers.get('idempotent-replayed')).toBe('true');
      expect(replayB.text).toBe(asKept(firstB.text, b.card.number));
      const replayA = await forward(a, bodyOf(a), key);
      expect(replayA.status).toBe(200);
      expect(replayA.headers.get('idempotent-replayed')).toBe('true');
      expect(replayA.text).toBe(asKept(firstA.text, a.card.number));
    }
    expect(hits()).toBe(2);
  });
});
