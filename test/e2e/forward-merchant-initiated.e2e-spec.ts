import { createForwardingMerchant, ForwardingMerchant } from '../factories/forwarding-merchants';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * Issue 22, item 6 (decisions/0078): Gr4vy's x-vault-forward-merchant-initiated is taken as `true` or
 * `false`, recorded on the forward record and never sent on; any other value is refused before
 * anything is sent. (The plan's side, queued forwards included, is in forward-plan.e2e-spec.ts.)
 */
describe('POST /vault-forward: x-vault-forward-merchant-initiated', () => {
  let t: TestApp;
  let downstream: Downstream;
  let merchant: ForwardingMerchant;

  beforeAll(async () => {
    downstream = await startHttpDownstream();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    merchant = await createForwardingMerchant(t, downstream.port, 'Merchant-initiated');
  });
  afterAll(async () => {
    await t.close();
    await downstream.close();
  });

  const forward = (value: string | undefined) =>
    http(t.url, '/vault-forward', {
      method: 'POST',
      token: merchant.token,
      headers: {
        'x-vault-forward-url': `${downstream.url}/mit`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': merchant.card.id,
        'content-type': 'application/json',
        ...(value === undefined ? {} : { 'x-vault-forward-merchant-initiated': value }),
      },
      rawBody: '{"number":"{{ CARD_NUMBER_1 }}"}',
    });

  const outcome = (id: string | null) =>
    waitFor(
      async () => {
        const found = await http(t.url, `/vault-forward/requests/${id}`, { token: merchant.token });
        return found.status === 200 && found.body.status !== null && found;
      },
      { what: `the outcome of forward ${id}` },
    );

  it('true/false (any case, spaces around) is recorded on the forward record and not sent on; absent is false', async () => {
    const before = downstream.received.length;
    for (const [sent, recorded] of [
      ['true', true],
      [' TRUE ', true],
      ['false', false],
      [undefined, false],
    ] as const) {
      const result = await forward(sent);
      expect(result.status).toBe(200);
      const record = await outcome(result.headers.get('x-vault-forward-request-id'));
      expect({ sent, merchant_initiated: record.body.merchant_initiated }).toEqual({
        sent,
        merchant_initiated: recorded,
      });
    }
    const received = downstream.received.slice(before);
    expect(received).toHaveLength(4);
    for (const request of received) {
      expect(request.headers['x-vault-forward-merchant-initiated']).toBeUndefined();
      expect(request.body.toString()).toBe(`{"number":"${merchant.card.number}"}`);
    }
    // The list shows it too, newest first.
    const listed = await http(t.url, '/vault-forward/requests?limit=4', { token: merchant.token });
    expect(listed.body.items.map((r: { merchant_initiated: boolean }) => r.merchant_initiated)).toEqual([
      false,
      false,
      true,
      true,
    ]);
  });

  it.each(['yes', '1', '', 'true, false', 'truee'])(
    '%j is 400 invalid-forward-header naming the header; nothing sent',
    async (value) => {
      const before = downstream.received.length;
      const refused = await forward(value);
      const problem = expectProblem(refused, 400, 'invalid-forward-header');
      expect(refused.headers.get('x-vault-forward-error')).toBe('true');
      expect(problem.errors).toEqual([
        { location: 'header', name: 'x-vault-forward-merchant-initiated', message: 'must be true or false' },
      ]);
      expect(downstream.received.length).toBe(before);
    },
  );
});
