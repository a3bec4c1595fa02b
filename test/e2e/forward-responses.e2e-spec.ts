import { randomUUID } from 'node:crypto';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiKey } from '../factories/api-keys';
import { cardNumber, storeCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { endedJob, startWorker, WorkerProcess } from '../support/forward-jobs';
import { expectProblem, http } from '../support/http';
import { dropQueueKeys } from '../support/redis-keys';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * Issue 27, items 1 and 4 (decisions/0097, 0098, 0099): a config's response rules tokenize, mask or
 * remove card data in a downstream's JSON answer before it is returned (or sealed, on the queued path),
 * and unmatched_pan masks or refuses card numbers no rule covers.
 */

/** A local PSP: answers each path with what `answers` holds for it, and records what it was sent. */
async function startPsp() {
  const answers = new Map<string, { type: string; body: string }>();
  const received: Array<{ url: string; body: string }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url!, body: Buffer.concat(chunks).toString() });
      const answer = answers.get(req.url!) ?? { type: 'application/json', body: '{"ok":true}' };
      res.writeHead(200, { 'content-type': answer.type });
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    answers,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
type Psp = Awaited<ReturnType<typeof startPsp>>;

const RULES = [
  { match: '$.card.number', action: 'tokenize', expiration_date: '$.card.expiry', cardholder_name: '$.card.name' },
  { match: '$.cards[*].pan', action: 'mask' },
  { match: '$.card.cvv', action: 'remove' },
];

async function merchantWithConfig(t: TestApp, psp: Psp, extra: Record<string, unknown> = {}) {
  const merchant = (await createMerchantAccount(t)).id;
  const token = await (await createApiKey(t, merchant)).token();
  const config = await http(t.url, '/vault-forward/configs', {
    method: 'POST',
    token,
    body: { display_name: 'PSP', hosts: [`127.0.0.1:${psp.port}`], methods: ['POST'], ...extra },
  });
  expect(config.status).toBe(201);
  return { merchant, token, configId: config.body.id as string };
}

function forward(t: TestApp, token: string, url: string, headers: Record<string, string> = {}, body = '{}') {
  return http(t.url, '/vault-forward', {
    method: 'POST',
    token,
    headers: {
      'x-vault-forward-url': url,
      'x-vault-forward-http-method': 'POST',
      'content-type': 'application/json',
      ...headers,
    },
    rawBody: body,
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('Response rules on the synchronous path', () => {
  let t: TestApp;
  let psp: Psp;

  beforeAll(async () => {
    psp = await startPsp();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
  });
  afterAll(async () => {
    await t.close();
    await psp.close();
  });

  it('a config takes response_rules and unmatched_pan on create and PUT, and shows them', async () => {
    const { token, configId } = await merchantWithConfig(t, psp, { response_rules: RULES.slice(0, 1) });
    const got = await http(t.url, `/vault-forward/configs/${configId}`, { token });
    expect(got.body).toMatchObject({ response_rules: RULES.slice(0, 1), unmatched_pan: 'pass' });
    const put = await http(t.url, `/vault-forward/configs/${configId}`, {
      method: 'PUT',
      token,
      body: { response_rules: RULES, unmatched_pan: 'refuse' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ response_rules: RULES, unmatched_pan: 'refuse', display_name: 'PSP' });
    // Another change leaves them as they are.
    const renamed = await http(t.url, `/vault-forward/configs/${configId}`, {
      method: 'PUT',
      token,
      body: { display_name: 'PSP 2' },
    });
    expect(renamed.body).toMatchObject({ response_rules: RULES, unmatched_pan: 'refuse' });
  });

  it.each([
    [[{ match: 'card.number', action: 'mask' }], 'response_rules[0].match', 'must start with $'],
    [
      [RULES[0], { match: '$.a..b', action: 'mask' }],
      'response_rules[1].match',
      'a . must be followed by a member name of letters, digits, _ or -',
    ],
    [
      [{ match: '$.a[?(@.x)]', action: 'mask' }],
      'response_rules[0].match',
      'only .name, [n] and [*] segments are supported',
    ],
    [[{ match: '$', action: 'mask' }], 'response_rules[0].match', 'must name a value below $'],
    [[{ match: '$.a', action: 'encrypt' }], 'response_rules[0].action', 'must be one of tokenize, mask, remove'],
    [
      [{ match: '$.a', action: 'mask', expiration_date: '$.b' }],
      'response_rules[0].expiration_date',
      'is only for action tokenize',
    ],
    [
      [{ match: '$.a', action: 'tokenize', cardholder_name: 7 }],
      'response_rules[0].cardholder_name',
      'must be a JSON path such as $.card.number',
    ],
    [[{ match: '$.a', action: 'mask', extra: 1 }], 'response_rules[0].extra', 'is not a field of a response rule'],
    [
      [{ match: '$.a', action: 'mask', on_existing: 'keep' }],
      'response_rules[0].on_existing',
      'is only for action tokenize',
    ],
    [
      [{ match: '$.a', action: 'tokenize', on_existing: 'overwrite' }],
      'response_rules[0].on_existing',
      'must be one of keep, update_expiry',
    ],
    [['$.a'], 'response_rules[0]', 'must be an object'],
  ])('response_rules %j is 400 naming %s', async (rules, name, message) => {
    const merchant = (await createMerchantAccount(t)).id;
    const token = await (await createApiKey(t, merchant)).token();
    const created = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'PSP', hosts: [`127.0.0.1:${psp.port}`], response_rules: rules },
    });
    expect(expectProblem(created, 400, 'validation-failed').errors).toEqual([{ location: 'body', name, message }]);
  });

  it('unmatched_pan other than pass, mask or refuse is 400', async () => {
    const { token, configId } = await merchantWithConfig(t, psp);
    const put = await http(t.url, `/vault-forward/configs/${configId}`, {
      method: 'PUT',
      token,
      body: { unmatched_pan: 'drop' },
    });
    expect(expectProblem(put, 400, 'validation-failed').errors).toEqual([
      { location: 'body', name: 'unmatched_pan', message: 'must be one of pass, mask, refuse' },
    ]);
  });

  it('tokenizes the PSP’s card: the caller gets a payment method id, which shows the card and fills the same PAN', async () => {
    const { merchant, token } = await merchantWithConfig(t, psp, { response_rules: RULES });
    const pan = cardNumber('4', 16);
    const path = `/card-${randomUUID()}`;
    psp.answers.set(path, {
      type: 'application/json; charset=utf-8',
      body: JSON.stringify({
        status: 'ok',
        card: { number: pan, expiry: '12/2030', name: 'Ada Lovelace', cvv: '123' },
      }),
    });
    const first = await forward(t, token, `${psp.url}${path}`);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-vault-forward-error')).toBeNull();
    expect(first.text).not.toContain(pan);
    const id = first.body.card.number as string;
    expect(id).toMatch(UUID);
    // The expiry and name stay (they are not the card number); the cvv rule removed its member.
    expect(first.body).toEqual({ status: 'ok', card: { number: id, expiry: '12/2030', name: 'Ada Lovelace' } });

    const shown = await http(t.url, `/payment-methods/${id}`, { token });
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ id, label: pan.slice(-4), expiration_date: '12/30', scheme: 'visa' });
    expect(shown.text).not.toContain(pan);

    // The same card again: the same payment method.
    const again = await forward(t, token, `${psp.url}${path}`);
    expect(again.body.card.number).toBe(id);

    const fill = `/fill-${randomUUID()}`;
    const filled = await forward(
      t,
      token,
      `${psp.url}${fill}`,
      { 'x-vault-forward-payment-methods': id },
      '{"pan":"{{ CARD_NUMBER_1 }}","exp":"{{ CARD_EXPIRATION_DATE_1 }}"}',
    );
    expect(filled.status).toBe(200);
    expect(psp.received.find((r) => r.url === fill)!.body).toBe(`{"pan":"${pan}","exp":"12/30"}`);

    // The PAN is in no log line and, in the database, only sealed.
    expect(t.logs.text).not.toContain(pan);
    const rows = await t.db.query(`SELECT * FROM payment_methods WHERE merchant_account_id = $1`, [merchant]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(pan);
    expect(Buffer.concat([rows[0].ciphertext, rows[0].wrapped_key]).includes(pan)).toBe(false);
  });

  it('answers with the same new card at once store it once: one payment method, one id', async () => {
    const { merchant, token } = await merchantWithConfig(t, psp, { response_rules: RULES });
    const pan = cardNumber('4', 16);
    const path = `/card-${randomUUID()}`;
    psp.answers.set(path, {
      type: 'application/json',
      body: JSON.stringify({ card: { number: pan, expiry: '03/32' } }),
    });
    const answers = await Promise.all(Array.from({ length: 8 }, () => forward(t, token, `${psp.url}${path}`)));
    const ids = new Set(answers.map((a) => a.body.card.number));
    expect(ids.size).toBe(1);
    const rows = await t.db.query(`SELECT id FROM payment_methods WHERE merchant_account_id = $1`, [merchant]);
    expect(rows).toEqual([{ id: [...ids][0] }]);
  });

  it('the same card in another merchant account becomes that merchant’s own payment method', async () => {
    const pan = cardNumber('5', 16);
    const path = `/card-${randomUUID()}`;
    psp.answers.set(path, {
      type: 'application/json',
      body: JSON.stringify({ card: { number: pan, expiry: '01/31' } }),
    });
    const a = await merchantWithConfig(t, psp, { response_rules: RULES });
    const b = await merchantWithConfig(t, psp, { response_rules: RULES });
    const idA = (await forward(t, a.token, `${psp.url}${path}`)).body.card.number;
    const idB = (await forward(t, b.token, `${psp.url}${path}`)).body.card.number;
    expect(idA).toMatch(UUID);
    expect(idB).toMatch(UUID);
    expect(idA).not.toBe(idB);
    expect((await http(t.url, `/payment-methods/${idA}`, { token: b.token })).status).toBe(404);
  });

  it('masks each card of a list to BIN and last four, and leaves an answer no rule matched byte for byte', async () => {
    const { token } = await merchantWithConfig(t, psp, { response_rules: RULES });
    const [p1, p2] = [cardNumber('4', 16), cardNumber('3', 15)];
    const path = `/list-${randomUUID()}`;
    psp.answers.set(path, {
      type: 'application/json',
      body: JSON.stringify({ cards: [{ pan: p1 }, { pan: p2 }, { pan: null }] }),
    });
    const masked = await forward(t, token, `${psp.url}${path}`);
    expect(masked.body).toEqual({
      cards: [
        { pan: `${p1.slice(0, 6)}******${p1.slice(-4)}` },
        { pan: `${p2.slice(0, 6)}*****${p2.slice(-4)}` },
        { pan: null },
      ],
    });
    const untouched = `/plain-${randomUUID()}`;
    // Spacing and a number JSON cannot hold exactly: an answer no rule touches is not re-serialised.
    psp.answers.set(untouched, { type: 'application/json', body: '{ "amount": 12345678901234567890 }' });
    expect((await forward(t, token, `${psp.url}${untouched}`)).text).toBe('{ "amount": 12345678901234567890 }');
  });

  it('a tokenize rule on a value that is not a card, or a new card without expiry: 502 ours, the answer withheld', async () => {
    const { token } = await merchantWithConfig(t, psp, { response_rules: RULES });
    const notCard = `/not-card-${randomUUID()}`;
    psp.answers.set(notCard, { type: 'application/json', body: '{"card":{"number":"4111111111111112"}}' });
    const refused = await forward(t, token, `${psp.url}${notCard}`);
    expect(refused.headers.get('x-vault-forward-error')).toBe('true');
    expect(expectProblem(refused, 502, 'response-card-unusable').errors).toEqual([
      { location: 'body', name: 'response_rules[0].match', message: 'the value it matched is not a card number' },
    ]);
    const pan = cardNumber('4', 16);
    const noExpiry = `/no-expiry-${randomUUID()}`;
    psp.answers.set(noExpiry, {
      type: 'application/json',
      body: JSON.stringify({ card: { number: pan, expiry: 'soon' } }),
    });
    const unstorable = await forward(t, token, `${psp.url}${noExpiry}`);
    expect(expectProblem(unstorable, 502, 'response-card-unusable').errors[0].name).toBe(
      'response_rules[0].expiration_date',
    );
    expect(unstorable.text).not.toContain(pan);
  });

  describe('a tokenized card passes the checks of POST /payment-methods (decision 0117)', () => {
    /** The answer's card refused: 502 naming the rule's field, no payment method stored, the value nowhere. */
    async function expectRefused(card: Record<string, unknown>, name: string, message: string) {
      const { merchant, token } = await merchantWithConfig(t, psp, { response_rules: RULES });
      const pan = cardNumber('4', 16);
      const path = `/checked-${randomUUID()}`;
      psp.answers.set(path, { type: 'application/json', body: JSON.stringify({ card: { number: pan, ...card } }) });
      const refused = await forward(t, token, `${psp.url}${path}`);
      expect(refused.headers.get('x-vault-forward-error')).toBe('true');
      const problem = expectProblem(refused, 502, 'response-card-unusable');
      expect(problem.errors).toEqual([{ location: 'body', name, message }]);
      expect(refused.text).not.toContain(pan);
      for (const value of Object.values(card)) expect(refused.text).not.toContain(JSON.stringify(value).slice(1, -1));
      expect(await t.db.query('SELECT id FROM payment_methods WHERE merchant_account_id = $1', [merchant])).toEqual([]);
    }

    it.each([
      ['a NUL', 'Ada\u0000Lovelace'],
      ['a CR', 'Ada\rLovelace'],
      ['an LF', 'Ada\nLovelace'],
      ['a C1 control', 'Ada\u0085Lovelace'],
    ])('a cardholder name with %s is refused as POST /payment-methods refuses it', async (_, name) => {
      const stored = await http(t.url, '/payment-methods', {
        method: 'POST',
        token: (await merchantWithConfig(t, psp)).token,
        body: { method: 'card', number: cardNumber(), expiration_date: '07/31', cardholder_name: name },
      });
      expect(expectProblem(stored, 400, 'validation-failed').errors).toEqual([
        expect.objectContaining({ location: 'body', name: 'cardholder_name' }),
      ]);
      await expectRefused(
        { expiry: '07/31', name },
        'response_rules[0].cardholder_name',
        'the cardholder name it names must not contain control characters',
      );
    });

    it('a cardholder name over 200 characters is refused, not cut', async () => {
      await expectRefused(
        { expiry: '07/31', name: 'A'.repeat(201) },
        'response_rules[0].cardholder_name',
        'the cardholder name it names must be 1 to 200 characters',
      );
    });

    it.each(['13/30', '00/2031', '2031-13', '7/31'])('an expiry of %s is refused', async (expiry) => {
      await expectRefused(
        { expiry, name: 'Ada Lovelace' },
        'response_rules[0].expiration_date',
        'the expiry it names is not MM/YY, MM/YYYY or YYYY-MM',
      );
    });
  });

  it('an answer leaves a stored card’s expiry as it is, unless the rule says on_existing: update_expiry', async () => {
    const { merchant, token, configId } = await merchantWithConfig(t, psp, { response_rules: RULES });
    const card = await storeCard(t, merchant, { expiration_date: '12/30' });
    const before = await t.db.query('SELECT expiration_date, updated_at FROM payment_methods WHERE id = $1', [card.id]);
    const path = `/existing-${randomUUID()}`;
    psp.answers.set(path, {
      type: 'application/json',
      body: JSON.stringify({ card: { number: card.number, expiry: '01/2035', name: 'Someone Else' } }),
    });
    const kept = await forward(t, token, `${psp.url}${path}`);
    expect(kept.status).toBe(200);
    expect(kept.body.card.number).toBe(card.id);
    expect(
      await t.db.query('SELECT expiration_date, updated_at FROM payment_methods WHERE id = $1', [card.id]),
    ).toEqual(before);
    expect((await http(t.url, `/payment-methods/${card.id}`, { token })).body.expiration_date).toBe('12/30');

    // Said explicitly: the expiry follows the answer (and forwards see it), nothing else of the card does.
    const updating = [{ ...RULES[0], on_existing: 'update_expiry' }];
    const put = await http(t.url, `/vault-forward/configs/${configId}`, {
      method: 'PUT',
      token,
      body: { response_rules: updating },
    });
    expect(put.status).toBe(200);
    expect(put.body.response_rules).toEqual(updating);
    expect((await forward(t, token, `${psp.url}${path}`)).body.card.number).toBe(card.id);
    const rows = await t.db.query('SELECT id, expiration_date FROM payment_methods WHERE merchant_account_id = $1', [
      merchant,
    ]);
    expect(rows).toEqual([{ id: card.id, expiration_date: '01/35' }]);
  });

  it('a JSON answer that does not parse, under rules, is 502 response-not-processable', async () => {
    const { token } = await merchantWithConfig(t, psp, { response_rules: RULES });
    const path = `/broken-${randomUUID()}`;
    psp.answers.set(path, { type: 'application/json', body: '{"card": ' });
    const refused = await forward(t, token, `${psp.url}${path}`);
    expectProblem(refused, 502, 'response-not-processable');
    expect(refused.headers.get('x-vault-forward-error')).toBe('true');
  });

  it('an answer over 1 MiB streams through without rules (or when none applies to its type), and is refused with them', async () => {
    const path = `/big-${randomUUID()}`;
    const big = JSON.stringify({ filler: 'a'.repeat(1024 * 1024 + 10) });
    psp.answers.set(path, { type: 'application/json', body: big });
    const plain = await merchantWithConfig(t, psp);
    const passed = await forward(t, plain.token, `${psp.url}${path}`);
    expect(passed.status).toBe(200);
    expect(passed.text.length).toBe(big.length);
    const ruled = await merchantWithConfig(t, psp, { response_rules: RULES });
    const refused = await forward(t, ruled.token, `${psp.url}${path}`);
    expect(refused.headers.get('x-vault-forward-error')).toBe('true');
    expect(expectProblem(refused, 502, 'response-too-large-for-rules').errors).toEqual([
      { location: 'body', name: 'response_rules', message: 'answer over 1048576 bytes' },
    ]);
    // JSON rules do not apply to another type of answer: it streams through.
    const other = `/big-text-${randomUUID()}`;
    psp.answers.set(other, { type: 'application/octet-stream', body: big });
    const streamed = await forward(t, ruled.token, `${psp.url}${other}`);
    expect(streamed.status).toBe(200);
    expect(streamed.text.length).toBe(big.length);
  });

  describe('unmatched_pan', () => {
    const stray = cardNumber('4', 16);
    const strayNumber = cardNumber('4', 15); // a bare JSON number under 2^53
    const body = JSON.stringify({ note: `card ${stray} on file`, ref: Number(strayNumber), at: 1700000000000 });

    it('refuse: 502 unmatched-card-number marked ours; the PAN in no answer, log or forward record', async () => {
      const { token, merchant } = await merchantWithConfig(t, psp, { unmatched_pan: 'refuse' });
      const path = `/stray-${randomUUID()}`;
      psp.answers.set(path, { type: 'application/json', body });
      const refused = await forward(t, token, `${psp.url}${path}`);
      expect(refused.headers.get('x-vault-forward-error')).toBe('true');
      expectProblem(refused, 502, 'unmatched-card-number');
      expect(refused.text).not.toContain(stray);
      const record = await waitFor(
        async () => {
          const found = await http(t.url, '/vault-forward/requests?limit=1', { token });
          return found.body.items?.length === 1 && found.body.items[0];
        },
        { what: 'the forward record' },
      );
      expect(record).toMatchObject({ status: 502, error_type: 'unmatched-card-number' });
      const rows = await t.db.query(`SELECT * FROM vault_forward_requests WHERE merchant_account_id = $1`, [merchant]);
      expect(JSON.stringify(rows)).not.toContain(stray);
      expect(t.logs.text).not.toContain(stray);
    });

    it('mask: card numbers in strings and bare numbers are masked, other long numbers kept; text answers too', async () => {
      const { token } = await merchantWithConfig(t, psp, { unmatched_pan: 'mask' });
      const path = `/stray-${randomUUID()}`;
      psp.answers.set(path, { type: 'application/json', body });
      const masked = await forward(t, token, `${psp.url}${path}`);
      expect(masked.status).toBe(200);
      expect(masked.body).toEqual({
        note: `card ${stray.slice(0, 6)}******${stray.slice(-4)} on file`,
        ref: `${strayNumber.slice(0, 6)}*****${strayNumber.slice(-4)}`,
        at: 1700000000000,
      });
      const text = `/text-${randomUUID()}`;
      psp.answers.set(text, { type: 'text/plain', body: `PAN=${stray};` });
      expect((await forward(t, token, `${psp.url}${text}`)).text).toBe(
        `PAN=${stray.slice(0, 6)}******${stray.slice(-4)};`,
      );
    });

    it('pass (the default) returns the answer as it came', async () => {
      const { token } = await merchantWithConfig(t, psp);
      const path = `/stray-${randomUUID()}`;
      psp.answers.set(path, { type: 'application/json', body });
      expect((await forward(t, token, `${psp.url}${path}`)).text).toBe(body);
    });
  });
});

describe('Response rules on the queued path', () => {
  let t: TestApp;
  let psp: Psp;
  let worker: WorkerProcess;
  const env = {
    QUEUE_BACKEND: 'redis',
    FORWARD_QUEUE_NAME: `test-jobs-${randomUUID()}`,
    FORWARD_INSECURE_HOSTS: '127.0.0.1',
  };

  beforeAll(async () => {
    psp = await startPsp();
    t = await startTestApp({ env });
    worker = await startWorker(env);
  }, 90_000);
  afterAll(async () => {
    worker.child.kill('SIGTERM');
    await worker.exited;
    await t.close();
    await psp.close();
    await dropQueueKeys(env.FORWARD_QUEUE_NAME);
  }, 30_000);

  it('the worker tokenizes the answer before sealing it; the job shows the id, never the PAN', async () => {
    const { token } = await merchantWithConfig(t, psp, { response_rules: RULES });
    const pan = cardNumber('4', 16);
    const path = `/card-${randomUUID()}`;
    psp.answers.set(path, {
      type: 'application/json',
      body: JSON.stringify({ card: { number: pan, expiry: '2031-04' } }),
    });
    const accepted = await forward(t, token, `${psp.url}${path}`, { prefer: 'respond-async' });
    expect(accepted.status).toBe(202);
    const job = await endedJob(t.url, token, accepted.body.id);
    expect(job.body.status).toBe('succeeded');
    expect(job.text).not.toContain(pan);
    const id = JSON.parse(job.body.response.body).card.number as string;
    expect(id).toMatch(UUID);
    expect((await http(t.url, `/payment-methods/${id}`, { token })).body).toMatchObject({
      label: pan.slice(-4),
      expiration_date: '04/31',
    });
    expect(worker.output()).not.toContain(pan);
  });
});
