import { randomUUID } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { MAX_STORED_RESPONSE_BYTES } from '../../src/modules/forwarding/idempotency/forward-idempotency';
import { IdempotencyService } from '../../src/modules/forwarding/idempotency/idempotency.service';
import { CardVault } from '../../src/modules/vault/card-vault.service';
import { createApiKey } from '../factories/api-keys';
import { createCard } from '../factories/cards';
import { createForwardingMerchant } from '../factories/forwarding-merchants';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { asKept } from '../support/card-spellings';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectProblem, http } from '../support/http';
import { dropQueueKeys } from '../support/redis-keys';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/** A Luhn-valid number, sent as a JSON number: unmatched_pan "mask" turns it into a quoted string, 2 bytes longer. */
const CARD_AS_NUMBER = 4111111111111111;
const CARDS_PER_ANSWER = 20_000;

/**
 * A downstream whose answer to `/masked/<n>` is JSON that a config with unmatched_pan "mask" returns
 * as exactly n bytes (each card number, a JSON number, becomes a masked string), read whole by the
 * response filter: so the idempotency layer gets a whole (not streamed) answer above 64 KiB, of a
 * size the test chooses. Counts the requests per path.
 */
async function startMaskingDownstream(): Promise<{
  port: number;
  url: string;
  hits: Map<string, number>;
  close(): Promise<void>;
}> {
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
      const masked = Number(/^\/masked\/(\d+)$/.exec(req.url!)?.[1] ?? 0);
      const cards: number[] = new Array<number>(CARDS_PER_ANSWER).fill(CARD_AS_NUMBER);
      const bare = JSON.stringify({ pad: '', cards }).length;
      const body = JSON.stringify({ pad: 'x'.repeat(masked - bare - 2 * CARDS_PER_ANSWER), cards });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Issue 11, item 7, synchronous path: Idempotency-Key replays the stored (sealed) answer. */
/** What a row keeps of a key: its keyed hash (decision 0139). */
const hashOf = (t: TestApp, merchantAccountId: string, key: string) =>
  t.get(CardVault).keyedHash(merchantAccountId, 'idempotency-key', key);

describe('Idempotency-Key on POST /vault-forward (synchronous)', () => {
  let t: TestApp;
  let downstream: Downstream;
  const merchants: Array<{ id: string; token: string; card: { id: string; number: string } }> = [];

  const merchant = () => createForwardingMerchant(t, downstream.port, 'Idempotency test');

  beforeAll(async () => {
    downstream = await startHttpDownstream();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    merchants.push(await merchant(), await merchant());
  });
  afterAll(async () => {
    await t?.close();
    await downstream?.close();
  });

  function forward(
    m: (typeof merchants)[number],
    key: string | undefined,
    body = '{"n":"{{ CARD_NUMBER_1 }}","secret":"downstream-sees-this"}',
    path = '/pay',
  ) {
    const headers: Record<string, string> = {
      'x-vault-forward-url': `${downstream.url}${path}`,
      'x-vault-forward-http-method': 'POST',
      'x-vault-forward-payment-methods': m.card.id,
      'content-type': 'application/json',
    };
    if (key !== undefined) headers['idempotency-key'] = key;
    return http(t.url, '/vault-forward', { method: 'POST', token: m.token, headers, rawBody: body });
  }

  const hits = (key: string) => downstream.received.filter((r) => r.body.toString().includes(key)).length;

  it('a repeat within 24 h replays the same answer; the downstream is hit once', async () => {
    const key = `k-${randomUUID()}`;
    const body = `{"n":"{{ CARD_NUMBER_1 }}","ref":"${key}"}`;
    const first = await forward(merchants[0], key, body);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await forward(merchants[0], key, body);
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    // The answer as a record keeps it (decision 0113): the filled card number, echoed by the target, withheld.
    expect(second.text).toBe(asKept(first.text, merchants[0].card.number));
    expect(second.headers.get('x-downstream')).toBe(first.headers.get('x-downstream'));
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(hits(key)).toBe(1);
  });

  it('the same key with a different request is 422 idempotency-key-reused, naming the header; nothing is sent', async () => {
    const key = `k-${randomUUID()}`;
    expect((await forward(merchants[0], key, `{"ref":"${key}","amount":1}`)).status).toBe(200);
    const other = await forward(merchants[0], key, `{"ref":"${key}","amount":2}`);
    const problem = expectProblem(other, 422, 'idempotency-key-reused');
    expect(problem.errors).toEqual([expect.objectContaining({ location: 'header', name: 'Idempotency-Key' })]);
    expect(hits(key)).toBe(1);
    // A different target with the same body is a different request too.
    expectProblem(
      await forward(merchants[0], key, `{"ref":"${key}","amount":1}`, '/other'),
      422,
      'idempotency-key-reused',
    );
  });

  it('20 concurrent duplicates: one request reaches the downstream', async () => {
    const key = `k-${randomUUID()}`;
    const body = `{"ref":"${key}"}`;
    const answers = await Promise.all(Array.from({ length: 20 }, () => forward(merchants[0], key, body)));
    expect(hits(key)).toBe(1);
    const fresh = answers.filter((a) => a.status === 200 && a.headers.get('idempotent-replayed') === null);
    expect(fresh).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 409) expectProblem(answer, 409, 'idempotency-key-in-progress');
      else {
        expect(answer.status).toBe(200);
        expect(answer.text).toBe(fresh[0].text);
      }
    }
    // Once the first has finished, a repeat replays.
    const after = await forward(merchants[0], key, body);
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect(hits(key)).toBe(1);
  });

  it('a key used again after its 24 h sends again; the purge deletes expired keys', async () => {
    const key = `k-${randomUUID()}`;
    const body = `{"ref":"${key}"}`;
    expect((await forward(merchants[0], key, body)).status).toBe(200);
    await t.db.query(
      `UPDATE vault_forward_idempotency_keys SET expires_at = now() - interval '1 second' WHERE merchant_account_id = $1 AND key = $2`,
      [merchants[0].id, await hashOf(t, merchants[0].id, key)],
    );
    const again = await forward(merchants[0], key, body);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(hits(key)).toBe(2);

    const old = `k-${randomUUID()}`;
    expect((await forward(merchants[0], old, `{"ref":"${old}"}`)).status).toBe(200);
    await t.db.query(
      `UPDATE vault_forward_idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`,
      [await hashOf(t, merchants[0].id, old)],
    );
    expect(await t.get(IdempotencyService).purgeExpired()).toBeGreaterThanOrEqual(1);
    const [oldHash, keyHash] = [await hashOf(t, merchants[0].id, old), await hashOf(t, merchants[0].id, key)];
    expect(await t.db.query(`SELECT 1 FROM vault_forward_idempotency_keys WHERE key = $1`, [oldHash])).toHaveLength(0);
    expect(await t.db.query(`SELECT 1 FROM vault_forward_idempotency_keys WHERE key = $1`, [keyHash])).toHaveLength(1);
  });

  it('the stored answer is sealed: the row holds neither the card number nor the downstream body', async () => {
    const key = `k-${randomUUID()}`;
    const secret = `sekrit-${randomUUID()}`;
    const first = await forward(merchants[0], key, `{"n":"{{ CARD_NUMBER_1 }}","s":"${secret}"}`);
    // The echo downstream answers with the filled body: the card number is in the answer that is stored.
    expect(first.text).toContain(merchants[0].card.number);
    const [row] = await t.db.query(
      `SELECT t::text AS text, master_key_id FROM vault_forward_idempotency_keys t WHERE key = $1`,
      [await hashOf(t, merchants[0].id, key)],
    );
    expect(row.master_key_id).toBeTruthy();
    for (const clear of [merchants[0].card.number, secret]) {
      expect(row.text).not.toContain(clear);
      expect(row.text).not.toContain(Buffer.from(clear).toString('hex'));
      expect(row.text).not.toContain(Buffer.from(clear).toString('base64').slice(0, 16));
    }
    // And it replays byte for byte what a record keeps: the filled number withheld, the rest as the target sent it.
    const again = await forward(merchants[0], key, `{"n":"{{ CARD_NUMBER_1 }}","s":"${secret}"}`);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(asKept(first.text, merchants[0].card.number));
    expect(again.text).toContain(secret);
  });

  it("another merchant's same key is independent", async () => {
    const key = `k-${randomUUID()}`;
    const body = `{"ref":"${key}"}`;
    expect((await forward(merchants[0], key, body)).status).toBe(200);
    const other = await forward(merchants[1], key, `{"ref":"${key}","x":1}`);
    expect(other.status).toBe(200);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(hits(key)).toBe(2);
  });

  it('an answer of exactly 1 MiB is stored and replayed; one byte more is passed on, not stored, and sent again', async () => {
    const masking = await startMaskingDownstream();
    try {
      const id = (await createMerchantAccount(t)).id;
      const token = await (await createApiKey(t, id)).token();
      const config = await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: {
          display_name: 'Idempotency sizes',
          hosts: [`127.0.0.1:${masking.port}`],
          methods: ['POST'],
          unmatched_pan: 'mask',
        },
      });
      expect(config.status).toBe(201);
      for (const [bytes, stored] of [
        [MAX_STORED_RESPONSE_BYTES, true],
        [MAX_STORED_RESPONSE_BYTES + 1, false],
      ] as const) {
        const key = `k-${randomUUID()}`;
        const path = `/masked/${bytes}`;
        const send = () =>
          http(t.url, '/vault-forward', {
            method: 'POST',
            token,
            headers: {
              'x-vault-forward-url': `${masking.url}${path}`,
              'x-vault-forward-http-method': 'POST',
              'content-type': 'application/json',
              'idempotency-key': key,
            },
            rawBody: '{}',
          });
        const first = await send();
        expect(first.status).toBe(200);
        // The answer is the size under test (masked, so whole: read by the response filter, not streamed).
        expect(Buffer.byteLength(first.text)).toBe(bytes);
        expect(first.text).not.toContain(String(CARD_AS_NUMBER));
        const again = await send();
        expect(again.status).toBe(200);
        expect(again.text).toBe(first.text);
        expect({ bytes, replayed: again.headers.get('idempotent-replayed'), sent: masking.hits.get(path) }).toEqual({
          bytes,
          replayed: stored ? 'true' : null,
          sent: stored ? 1 : 2,
        });
        const rows = await t.db.query(
          `SELECT state FROM vault_forward_idempotency_keys WHERE merchant_account_id = $1 AND key = $2`,
          [id, await hashOf(t, id, key)],
        );
        expect(rows).toEqual(stored ? [{ state: 'done' }] : []);
      }
    } finally {
      await masking.close();
    }
  });

  it('a failed forward releases its key; a malformed key is a 400 naming the header', async () => {
    const key = `k-${randomUUID()}`;
    const refused = await http(t.url, '/vault-forward', {
      method: 'POST',
      token: merchants[0].token,
      headers: {
        'x-vault-forward-url': 'http://127.0.0.1:1/x',
        'x-vault-forward-http-method': 'POST',
        'idempotency-key': key,
      },
      rawBody: '{}',
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(
      await t.db.query(`SELECT 1 FROM vault_forward_idempotency_keys WHERE key = $1`, [
        await hashOf(t, merchants[0].id, key),
      ]),
    ).toHaveLength(0);
    const bad = await http(t.url, '/vault-forward', {
      method: 'POST',
      token: merchants[0].token,
      headers: {
        'x-vault-forward-url': `${downstream.url}/pay`,
        'x-vault-forward-http-method': 'POST',
        'idempotency-key': 'x'.repeat(256),
      },
      rawBody: '{}',
    });
    expect(expectProblem(bad, 400, 'invalid-idempotency-key').errors[0]).toMatchObject({
      location: 'header',
      name: 'Idempotency-Key',
    });
  });
});

/** Issue 11, item 7, queued path: the same key and request within 24 h returns the same job (200); concurrent duplicates create one job. */
describe('Idempotency-Key on POST /vault-forward with Prefer: respond-async', () => {
  let t: TestApp;
  let downstream: Downstream;
  let token: string;
  let cardId: string;
  let merchant: string;
  const queueName = `test-idem-${randomUUID()}`;

  beforeAll(async () => {
    downstream = await startHttpDownstream();
    // A queue of this file's own, with no worker: jobs stay queued, which is all idempotency needs.
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1', FORWARD_QUEUE_NAME: queueName } });
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    const created = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Idem async', hosts: [`127.0.0.1:${downstream.port}`], methods: ['POST'] },
    });
    expect(created.status).toBe(201);
    cardId = (await createCard(t, merchant)).id;
  });
  afterAll(async () => {
    await t?.close();
    await downstream?.close();
    await dropQueueKeys(queueName);
  });

  function queue(key: string, body: string) {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        prefer: 'respond-async',
        'idempotency-key': key,
        'x-vault-forward-url': `${downstream.url}/pay`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': cardId,
      },
      rawBody: body,
    });
  }
  const jobsWith = async (key: string) =>
    (
      await t.db.query(`SELECT id FROM vault_forward_jobs WHERE merchant_account_id = $1 AND idempotency_key = $2`, [
        merchant,
        await hashOf(t, merchant, key),
      ])
    ).length;

  it('a repeat returns the same job with 200; a different request with the key is 422', async () => {
    const key = `k-${randomUUID()}`;
    const first = await queue(key, '{"n":"{{ CARD_NUMBER_1 }}","a":1}');
    expect(first.status).toBe(202);
    const again = await queue(key, '{"n":"{{ CARD_NUMBER_1 }}","a":1}');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expectProblem(await queue(key, '{"n":"{{ CARD_NUMBER_1 }}","a":2}'), 422, 'idempotency-key-reused');
    expect(await jobsWith(key)).toBe(1);
  });

  it('20 concurrent duplicates create one job', async () => {
    const key = `k-${randomUUID()}`;
    const answers = await Promise.all(Array.from({ length: 20 }, () => queue(key, '{"n":"{{ CARD_NUMBER_1 }}"}')));
    expect(await jobsWith(key)).toBe(1);
    expect(answers.filter((a) => a.status === 202)).toHaveLength(1);
    const ids = new Set(answers.map((a) => a.body.id));
    expect(ids.size).toBe(1);
    expect(answers.every((a) => a.status === 202 || a.status === 200)).toBe(true);
  });

  it('40 concurrent requests with 40 keys (creates batched into shared statements): each key done with its own job', async () => {
    const keys = Array.from({ length: 40 }, () => `k-${randomUUID()}`);
    const answers = await Promise.all(keys.map((key, i) => queue(key, `{"n":"{{ CARD_NUMBER_1 }}","i":${i}}`)));
    expect(answers.map((a) => a.status)).toEqual(keys.map(() => 202));
    // The key row and the job were written by the same statement: every key points at the job its request got.
    const hashes = await Promise.all(keys.map((key) => hashOf(t, merchant, key)));
    const rows = await t.db.query<Array<{ key: string; state: string; job_id: string; idempotency_key: string }>>(
      `SELECT k.key, k.state, k.job_id, j.idempotency_key FROM vault_forward_idempotency_keys k JOIN vault_forward_jobs j ON j.id = k.job_id
        WHERE k.merchant_account_id = $1 AND k.key = ANY($2::text[])`,
      [merchant, hashes],
    );
    expect(rows).toHaveLength(40);
    for (const [i, hash] of hashes.entries()) {
      expect(rows.find((r) => r.key === hash)).toEqual({
        key: hash,
        state: 'done',
        job_id: answers[i].body.id,
        idempotency_key: hash,
      });
    }
    const repeats = await Promise.all(keys.map((key, i) => queue(key, `{"n":"{{ CARD_NUMBER_1 }}","i":${i}}`)));
    expect(repeats.map((a) => [a.status, a.body.id])).toEqual(answers.map((a) => [200, a.body.id]));
  });

  /**
   * Counts the claim's looks at the winner's row (its SELECT), calling through: the waiter's polls are
   * counted instead of timed, so a loaded machine's slow polls change nothing.
   */
  function countPolls(): { count: () => number; restore: () => void } {
    let polls = 0;
    const query = t.db.query.bind(t.db);
    const spy = jest.spyOn(t.db, 'query').mockImplementation((sql: string, ...rest: unknown[]) => {
      // IdempotencyKeysRepository.find (by the key's hash), not the one look for a legacy row.
      if (sql.includes('FROM vault_forward_idempotency_keys') && sql.includes('AND key_hashed AND')) polls++;
      return query(sql, ...(rest as [unknown[]]));
    });
    return { count: () => polls, restore: () => spy.mockRestore() };
  }

  it('a queued duplicate waits for the running claim, polling with a capped backoff, and gets the job once attached', async () => {
    const idempotency = t.get(IdempotencyService);
    const key = `k-${randomUUID()}`;
    const fingerprint = { headers: {}, body: Buffer.alloc(32, 7) };
    const first = await idempotency.claim(merchant, key, fingerprint, 'async');
    if (first.outcome !== 'new') throw new Error(`expected a new claim, got ${first.outcome}`);
    const jobId = randomUUID();
    const polls = countPolls();
    try {
      const waiter = idempotency.claim(merchant, key, fingerprint, 'async', { waitMs: 10_000 });
      // Twelve polls fit in the 10 s only if the backoff stops growing (20, 40, 80, 160, then 250 ms: about
      // 2.3 s); doubling on (…, 2560, 5120 ms) would give in-progress at the deadline after about nine.
      await waitFor(() => polls.count() >= 12, { timeoutMs: 10_000, what: 'twelve polls of the running claim' });
      // The job is attached as ForwardJobsRepository.create does: done, with its job id.
      await t.db.query(`UPDATE vault_forward_idempotency_keys SET state = 'done', job_id = $2 WHERE id = $1`, [
        first.id,
        jobId,
      ]);
      expect(await waiter).toEqual({ outcome: 'replay', jobId });
    } finally {
      polls.restore();
    }
    await first.release();
  });

  it('a queued duplicate of a claim that never attaches a job polls until its deadline, then gets in-progress', async () => {
    const idempotency = t.get(IdempotencyService);
    const key = `k-${randomUUID()}`;
    const fingerprint = { headers: {}, body: Buffer.alloc(32, 8) };
    const first = await idempotency.claim(merchant, key, fingerprint, 'async');
    expect(first.outcome).toBe('new');
    const polls = countPolls();
    try {
      expect(await idempotency.claim(merchant, key, fingerprint, 'async', { waitMs: 1_500 })).toEqual({
        outcome: 'in-progress',
      });
      // It waited and looked again (1.5 s holds about nine polls), rather than answering at the first look.
      expect(polls.count()).toBeGreaterThanOrEqual(3);
      // Without waitMs (the synchronous path): at the first look.
      const before = polls.count();
      expect(await idempotency.claim(merchant, key, fingerprint, 'async')).toEqual({ outcome: 'in-progress' });
      expect(polls.count() - before).toBe(1);
    } finally {
      polls.restore();
    }
    if (first.outcome === 'new') await first.release();
  });

  it('a key used synchronously cannot be reused for a queued forward', async () => {
    const key = `k-${randomUUID()}`;
    const sync = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'idempotency-key': key,
        'x-vault-forward-url': `${downstream.url}/pay`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': cardId,
      },
      rawBody: '{"n":"{{ CARD_NUMBER_1 }}"}',
    });
    expect(sync.status).toBe(200);
    expectProblem(await queue(key, '{"n":"{{ CARD_NUMBER_1 }}"}'), 422, 'idempotency-key-reused');
  });
});
