import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { ForwardQueue } from '../../src/platform/job-queue/forward-queue';
import { createApiKey } from '../factories/api-keys';
import { cardNumber, createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import {
  queuedForwardEnv,
  recordWithOutcome,
  startScriptedDownstream,
  startWorker,
  stopQueuedSetup,
} from '../support/forward-jobs';
import { expectProblem, http, HttpResult } from '../support/http';
import { hmac } from '../support/independent-crypto';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';
import { testRedisUrl } from '../support/test-services';

/** One API, one real worker process and a scripted downstream, on a queue of this run's own. */
async function setUp(backend: 'redis' | 'postgres') {
  const env = queuedForwardEnv('test-jobs', backend);
  const downstream = await startScriptedDownstream();
  const t = await startTestApp({ env });
  const worker = await startWorker(env);
  const merchant = (await createMerchantAccount(t)).id;
  const token = await (await createApiKey(t, merchant)).token();
  const config = await http(t.url, '/vault-forward/configs', {
    method: 'POST',
    token,
    body: { display_name: 'Queued', hosts: [`127.0.0.1:${downstream.port}`] },
  });
  expect(config.status).toBe(201);
  const number = cardNumber('4', 16);
  const card = { id: (await createCard(t, merchant, { number, expiration_date: '04/31' })).id, number };
  return { env, downstream, t, worker, merchant, token, configId: config.body.id as string, card };
}

type Setup = Awaited<ReturnType<typeof setUp>>;

function queue(
  s: Setup,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
) {
  return http(s.t.url, '/vault-forward', {
    method: 'POST',
    token: s.token,
    headers: {
      prefer: 'respond-async',
      'x-vault-forward-url': `${s.downstream.url}${path}`,
      'x-vault-forward-http-method': options.method ?? 'PUT',
      'x-vault-forward-payment-methods': s.card.id,
      'content-type': 'application/json',
      ...options.headers,
    },
    rawBody: options.body ?? '{"n":"{{ CARD_NUMBER_1 }}","cvv":"739"}',
  });
}

async function ended(s: Setup, id: string, timeoutMs = 20_000): Promise<HttpResult> {
  return waitFor(
    async () => {
      const job = await http(s.t.url, `/vault-forward/jobs/${id}`, { token: s.token });
      return ['succeeded', 'failed', 'cancelled'].includes(job.body.status) && job;
    },
    { timeoutMs, what: `job ${id} to end` },
  );
}

/**
 * A completed BullMQ job is removed at once, so the same attempt can be enqueued again (a re-sent
 * enqueue, the overdue sweep racing the end): only the job's claim stands between it and a resend.
 * `held` says whether the engine still holds the forward's BullMQ job (its id is the forward's).
 */
async function deliverEndedAttemptAgain(s: Setup, path: string, held: (bullJobId: string) => Promise<boolean>) {
  const job = (await queue(s, path)).body.id as string;
  expect((await ended(s, job)).body).toMatchObject({ status: 'succeeded', attempts: [{ status: 200 }] });
  await waitFor(async () => !(await held(job)), { what: 'BullMQ to remove the completed job' });
  await s.t.app.get(ForwardQueue).enqueue(job, { attempt: 1 });
  // Gone again only once a worker has run it (and completed it) a second time.
  await waitFor(async () => !(await held(job)), { timeoutMs: 10_000, what: 'the second delivery to be done' });
  expect(s.downstream.requestsTo(path)).toHaveLength(1);
  const after = (await http(s.t.url, `/vault-forward/jobs/${job}`, { token: s.token })).body;
  expect(after).toMatchObject({ status: 'succeeded', attempts: [{ status: 200 }] });
}

describe('Queued forwards (Prefer: respond-async) with a real worker, on Redis', () => {
  let s: Setup;

  beforeAll(async () => {
    s = await setUp('redis');
  }, 90_000);

  afterAll(async () => stopQueuedSetup(s), 30_000);

  it('answers 202 with the job, Location and Preference-Applied; the worker sends it, the job ends succeeded with the answer', async () => {
    const accepted = await queue(s, '/charge?x=1', { headers: { prefer: 'wait=5, Respond-Async' } });
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('preference-applied')).toBe('respond-async');
    const id = accepted.body.id as string;
    expect(accepted.headers.get('location')).toBe(`/vault-forward/jobs/${id}`);
    expect(accepted.body).toMatchObject({
      type: 'vault-forward-job',
      status: 'queued',
      target: { method: 'PUT', url: `${s.downstream.url}/charge` },
      payment_method_ids: [s.card.id],
      authentication_ids: [],
      max_attempts: 5,
      attempts: [],
      response: null,
      callback_url: null,
      finished_at: null,
    });
    expect(accepted.body.created_at).toMatch(/\.\d{6}\+00:00$/);
    expect(accepted.text).not.toContain(s.card.number);

    const job = await ended(s, id);
    expect(job.body.status).toBe('succeeded');
    expect(job.body.attempts).toHaveLength(1);
    expect(job.body.attempts[0]).toMatchObject({ number: 1, status: 200, error_type: null, next_attempt_at: null });
    expect(job.body.attempts[0].started_at).toMatch(/\.\d{6}\+00:00$/);
    expect(job.body.finished_at).toMatch(/\.\d{6}\+00:00$/);
    const got = s.downstream.requestsTo('/charge');
    expect(got).toHaveLength(1);
    expect(got[0].url).toBe('/charge?x=1');
    expect(got[0].body.toString()).toBe(`{"n":"${s.card.number}","cvv":"739"}`);
    expect(job.body.response.status).toBe(200);
    // Stored as a record keeps it (decision 0113): the filled number withheld, the security code removed by name.
    expect(JSON.parse(job.body.response.body)).toEqual({ echo: '{"n":"[Redacted]","cvv":"[Redacted]"}' });
    // The attempt's forward record exists like a synchronous forward's.
    // On record (status null) before the card left; the outcome follows in a batch.
    const record = await recordWithOutcome(s.t.url, s.token, job.body.attempts[0].request_id);
    expect(record.body.status).toBe(200);
  });

  it('503, 503, 200: three attempts, succeeded', async () => {
    s.downstream.script('/flaky', [{ status: 503 }, { status: 503 }, { status: 200, body: '{"ok":true}' }]);
    const job = await ended(s, (await queue(s, '/flaky')).body.id);
    expect(job.body.status).toBe('succeeded');
    expect(job.body.attempts.map((a: { status: number }) => a.status)).toEqual([503, 503, 200]);
    expect(job.body.attempts[0].next_attempt_at).not.toBeNull();
    expect(job.body.response).toMatchObject({ status: 200, body: '{"ok":true}' });
    expect(s.downstream.requestsTo('/flaky')).toHaveLength(3);
  });

  it('400: failed after one attempt, the answer kept for inspection', async () => {
    s.downstream.script('/bad', [{ status: 400, body: '{"why":"bad"}' }]);
    const job = await ended(s, (await queue(s, '/bad')).body.id);
    expect(job.body.status).toBe('failed');
    expect(job.body.attempts).toHaveLength(1);
    expect(job.body.response).toMatchObject({ status: 400, body: '{"why":"bad"}' });
  });

  it('stops after x-vault-forward-max-attempts', async () => {
    s.downstream.script('/down', [{ status: 502 }]);
    const job = await ended(s, (await queue(s, '/down', { headers: { 'x-vault-forward-max-attempts': '2' } })).body.id);
    expect(job.body).toMatchObject({ status: 'failed', max_attempts: 2 });
    expect(job.body.attempts.map((a: { status: number }) => a.status)).toEqual([502, 502]);
  });

  it('honours Retry-After: 2 on a 503 (next_attempt_at ≈ 2 s after the answer, and the downstream sees it then)', async () => {
    s.downstream.script('/later', [{ status: 503, headers: { 'retry-after': '2' } }, { status: 200 }]);
    const job = await ended(s, (await queue(s, '/later')).body.id);
    expect(job.body.status).toBe('succeeded');
    const [first] = job.body.attempts;
    const answeredAt = Date.parse(first.started_at) + first.duration_ms;
    const wait = Date.parse(first.next_attempt_at) - answeredAt;
    expect(wait).toBeGreaterThanOrEqual(1_990);
    expect(wait).toBeLessThan(2_100);
    const [a, b] = s.downstream.requestsTo('/later');
    expect(b.at - a.at).toBeGreaterThanOrEqual(1_900);
  });

  it('applies an hmac-signature method in the worker, which the downstream verifies', async () => {
    const secret = 'queued-hmac-secret-0123456789';
    const method = await http(s.t.url, `/vault-forward/configs/${s.configId}/authentications`, {
      method: 'POST',
      token: s.token,
      body: {
        kind: 'hmac-signature',
        label: 'queued',
        fields: {
          secret,
          algorithm: 'sha256',
          encoding: 'hex',
          header: 'X-Signature',
          timestamp_header: 'X-Timestamp',
        },
      },
    });
    expect(method.status).toBe(201);
    const job = await ended(
      s,
      (await queue(s, '/signed', { headers: { 'x-vault-forward-authentications': method.body.id } })).body.id,
    );
    expect(job.body).toMatchObject({ status: 'succeeded', authentication_ids: [method.body.id] });
    const [got] = s.downstream.requestsTo('/signed');
    expect(got.body.toString()).toContain(s.card.number);
    expect(got.headers['x-signature']).toBe(
      hmac('sha256', secret, [`${String(got.headers['x-timestamp'])}.`, got.body], 'hex'),
    );
  });

  it('POST after a 500: not retried without Idempotency-Key; retried with one, which is forwarded downstream', async () => {
    s.downstream.script('/post-nokey', [{ status: 500 }, { status: 200 }]);
    const plain = await ended(s, (await queue(s, '/post-nokey', { method: 'POST' })).body.id);
    expect(plain.body.status).toBe('failed');
    expect(plain.body.attempts).toHaveLength(1);
    expect(s.downstream.requestsTo('/post-nokey')[0].headers['idempotency-key']).toBeUndefined();

    s.downstream.script('/post-key', [{ status: 500 }, { status: 200 }]);
    const key = `order-${randomUUID()}`;
    const keyed = await ended(
      s,
      (await queue(s, '/post-key', { method: 'POST', headers: { 'idempotency-key': key } })).body.id,
    );
    expect(keyed.body.status).toBe('succeeded');
    expect(keyed.body.attempts.map((a: { status: number }) => a.status)).toEqual([500, 200]);
    expect(s.downstream.requestsTo('/post-key').map((r) => r.headers['idempotency-key'])).toEqual([key, key]);
  });

  it('a connect error is retried even for a POST without a key', async () => {
    // A port nothing listens on: the connection is refused, so nothing reached a downstream.
    const closed = await startScriptedDownstream();
    await closed.close();
    const config = await http(s.t.url, '/vault-forward/configs', {
      method: 'POST',
      token: s.token,
      body: { display_name: 'Closed', hosts: [`127.0.0.1:${closed.port}`] },
    });
    expect(config.status).toBe(201);
    const accepted = await http(s.t.url, '/vault-forward', {
      method: 'POST',
      token: s.token,
      headers: {
        prefer: 'respond-async',
        'x-vault-forward-url': `${closed.url}/x`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-max-attempts': '3',
      },
    });
    expect(accepted.status).toBe(202);
    const job = await ended(s, accepted.body.id);
    expect(job.body.status).toBe('failed');
    expect(job.body.attempts.map((a: { error_type: string }) => a.error_type)).toEqual([
      'downstream-unreachable',
      'downstream-unreachable',
      'downstream-unreachable',
    ]);
  });

  // Issue 19 (4): a queued job is judged when it is sent. Its first attempt gets a 503 with Retry-After, the
  // config changes while it waits, and the second attempt must end the job as a synchronous forward is
  // answered then: 403 endpoint-not-enabled, not retried, nothing more sent. The four changes run side by side,
  // each on a config and downstream of its own: each job waits out its Retry-After (5 s, the margin for the change
  // to reach the worker), so one after another they would wait it four times.
  it('a job whose config is deleted, disabled or stripped of host or method while queued fails at send time, nothing sent', async () => {
    const changes: Array<[string, { delete?: boolean; body?: Record<string, unknown> }]> = [
      ['deleted', { delete: true }],
      ['disabled', { body: { enabled: false } }],
      ['stripped of the host', { body: { hosts: ['elsewhere.example'] } }],
      ['stripped of the method', { body: { methods: ['GET', 'POST'] } }],
    ];
    const outcomes = await Promise.allSettled(
      changes.map(async ([, change]) => {
        const own = await startScriptedDownstream();
        try {
          const config = await http(s.t.url, '/vault-forward/configs', {
            method: 'POST',
            token: s.token,
            body: { display_name: 'Changes', hosts: [`127.0.0.1:${own.port}`] },
          });
          expect(config.status).toBe(201);
          own.script('/later', [{ status: 503, headers: { 'retry-after': '5' } }, { status: 200 }]);
          const send = (headers: Record<string, string>) =>
            http(s.t.url, '/vault-forward', {
              method: 'POST',
              token: s.token,
              headers: {
                'x-vault-forward-url': `${own.url}/later`,
                'x-vault-forward-http-method': 'PUT',
                'x-vault-forward-payment-methods': s.card.id,
                'content-type': 'application/json',
                ...headers,
              },
              rawBody: '{"n":"{{ CARD_NUMBER_1 }}"}',
            });
          const accepted = await send({ prefer: 'respond-async' });
          expect(accepted.status).toBe(202);
          const id = accepted.body.id as string;
          await waitFor(
            async () => {
              const job = await http(s.t.url, `/vault-forward/jobs/${id}`, { token: s.token });
              return job.body.status === 'queued' && job.body.attempts.length === 1;
            },
            { timeoutMs: 20_000, what: 'the first attempt to be answered 503' },
          );
          const path = `/vault-forward/configs/${config.body.id}`;
          const changed = change.delete
            ? await http(s.t.url, path, { method: 'DELETE', token: s.token })
            : await http(s.t.url, path, { method: 'PUT', token: s.token, body: change.body });
          expect(changed.status).toBeLessThan(300);
          // What a synchronous forward gets at this moment, and what the job must end with.
          expectProblem(await send({}), 403, 'endpoint-not-enabled');

          const job = await ended(s, id, 30_000);
          expect(job.body.status).toBe('failed');
          expect(job.body.attempts.map((a: { status: number | null; error_type: string | null }) => a)).toMatchObject([
            { status: 503, error_type: null },
            { status: null, error_type: 'endpoint-not-enabled' },
          ]);
          expect(own.requestsTo('/later')).toHaveLength(1);
        } finally {
          await own.close();
        }
      }),
    );
    // Every case settled before any failure is reported, each under the change it was about.
    expect(
      outcomes.flatMap((outcome, i) =>
        outcome.status === 'rejected' ? [`config ${changes[i][0]}: ${(outcome.reason as Error).message}`] : [],
      ),
    ).toEqual([]);
  }, 40_000);

  it('cancels a job waiting for its next attempt; 409 for a running one, 404 for another merchant’s or an unknown id', async () => {
    s.downstream.script('/wait', [{ status: 503, headers: { 'retry-after': '60' } }, { status: 200 }]);
    const id = (await queue(s, '/wait')).body.id as string;
    await waitFor(
      async () => (await http(s.t.url, `/vault-forward/jobs/${id}`, { token: s.token })).body.attempts?.length === 1,
      { timeoutMs: 10_000 },
    );
    const other = await createMerchantAccount(s.t);
    const otherToken = await (await createApiKey(s.t, other.id)).token();
    expectProblem(
      await http(s.t.url, `/vault-forward/jobs/${id}`, { method: 'DELETE', token: otherToken }),
      404,
      'vault-forward-job-not-found',
    );
    expectProblem(
      await http(s.t.url, `/vault-forward/jobs/${id}`, { token: otherToken }),
      404,
      'vault-forward-job-not-found',
    );
    expectProblem(
      await http(s.t.url, `/vault-forward/jobs/${randomUUID()}`, { method: 'DELETE', token: s.token }),
      404,
      'vault-forward-job-not-found',
    );
    expectProblem(
      await http(s.t.url, `/vault-forward/jobs/not-a-uuid`, { method: 'DELETE', token: s.token }),
      404,
      'vault-forward-job-not-found',
    );
    const cancelled = await http(s.t.url, `/vault-forward/jobs/${id}`, { method: 'DELETE', token: s.token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled' });
    expect(cancelled.body.finished_at).not.toBeNull();
    expect(await s.t.db.query(`SELECT 1 FROM vault_forward_job_plans WHERE job_id = $1`, [id])).toHaveLength(0);

    s.downstream.script('/hold', [{ hold: true }]);
    const running = (await queue(s, '/hold')).body.id as string;
    await waitFor(() => s.downstream.requestsTo('/hold').length === 1, { timeoutMs: 10_000 });
    expectProblem(
      await http(s.t.url, `/vault-forward/jobs/${running}`, { method: 'DELETE', token: s.token }),
      409,
      'vault-forward-job-not-cancellable',
    );
    const held = s.downstream.held.shift()!;
    held.writeHead(200).end('released');
    expect((await ended(s, running)).body.status).toBe('succeeded');
    // Ended: not cancellable either.
    expectProblem(
      await http(s.t.url, `/vault-forward/jobs/${running}`, { method: 'DELETE', token: s.token }),
      409,
      'vault-forward-job-not-cancellable',
    );
  });

  it('lists jobs newest first with a status filter; scopes: read to look, write to cancel', async () => {
    const all = await http(s.t.url, '/vault-forward/jobs?limit=100', { token: s.token });
    expect(all.status).toBe(200);
    expect(all.body.items.length).toBeGreaterThan(3);
    expect(
      all.body.items.every(
        (j: { type: string; response: unknown }) => j.type === 'vault-forward-job' && j.response === null,
      ),
    ).toBe(true);
    const failed = await http(s.t.url, '/vault-forward/jobs?status=failed', { token: s.token });
    expect(failed.body.items.length).toBeGreaterThan(0);
    expect(failed.body.items.every((j: { status: string }) => j.status === 'failed')).toBe(true);
    expect((await http(s.t.url, '/vault-forward/jobs?status=nope', { token: s.token })).status).toBe(400);
    const readOnly = await (await createApiKey(s.t, s.merchant)).token(['vault-forwards.read']);
    expect((await http(s.t.url, '/vault-forward/jobs', { token: readOnly })).status).toBe(200);
    expect(
      (await http(s.t.url, `/vault-forward/jobs/${all.body.items[0].id}`, { method: 'DELETE', token: readOnly }))
        .status,
    ).toBe(403);
  });

  it('checks the queued-only headers (each problem names its header) and keeps no job for a refused request', async () => {
    const before = Number((await s.t.db.query(`SELECT count(*) AS n FROM vault_forward_jobs`))[0].n);
    const named = (result: HttpResult, status: number, code: string, header: string) => {
      const problem = expectProblem(result, status, code);
      expect(problem.errors[0]).toMatchObject({ location: 'header', name: header });
    };
    for (const value of ['0', '21', 'x', '1.5']) {
      named(
        await queue(s, '/x', { headers: { 'x-vault-forward-max-attempts': value } }),
        400,
        'invalid-forward-header',
        'x-vault-forward-max-attempts',
      );
    }
    named(
      await queue(s, '/x', { headers: { 'idempotency-key': 'k'.repeat(256) } }),
      400,
      'invalid-idempotency-key',
      'Idempotency-Key',
    );
    named(
      await queue(s, '/x', { headers: { 'x-vault-forward-callback-url': 'https://not-enabled.example/cb' } }),
      403,
      'endpoint-not-enabled',
      'x-vault-forward-callback-url',
    );
    named(
      await queue(s, '/x', { headers: { 'x-vault-forward-callback-url': 'http://10.0.0.1/cb' } }),
      400,
      'insecure-target',
      'x-vault-forward-callback-url',
    );
    named(
      await queue(s, '/x', { headers: { 'x-vault-forward-callback-url': 'not a url' } }),
      400,
      'invalid-forward-header',
      'x-vault-forward-callback-url',
    );
    // The synchronous path's checks apply as they are.
    named(
      await queue(s, '/x', { headers: { 'x-vault-forward-url': 'https://not-enabled.example/' } }),
      403,
      'endpoint-not-enabled',
      'x-vault-forward-url',
    );
    expectProblem(await queue(s, '/x', { body: '{"n":"{{ CARD_NUMBER_2 }}"}' }), 400, 'invalid-placeholder');
    // Queued-only headers on a synchronous forward would be ignored: refused instead.
    named(
      await queue(s, '/x', { headers: { prefer: 'return=minimal', 'x-vault-forward-max-attempts': '3' } }),
      400,
      'invalid-forward-header',
      'x-vault-forward-max-attempts',
    );
    expect(Number((await s.t.db.query(`SELECT count(*) AS n FROM vault_forward_jobs`))[0].n)).toBe(before);

    const withCallback = await queue(s, '/x', {
      headers: { 'x-vault-forward-callback-url': `${s.downstream.url}/callback` },
    });
    expect(withCallback.status).toBe(202);
    expect(withCallback.body.callback_url).toBe(`${s.downstream.url}/callback`);
  });

  it('an ended attempt delivered again (BullMQ removed it on completion) is refused by the claim: not sent twice', async () => {
    const redis = new Redis(testRedisUrl());
    try {
      await deliverEndedAttemptAgain(
        s,
        '/once',
        async (bullJobId) => (await redis.exists(`bull:${s.env.FORWARD_QUEUE_NAME}:${bullJobId}`)) === 1,
      );
    } finally {
      redis.disconnect();
    }
  });

  it('leaves no card number, CVV or method secret in any Redis key (SCAN, TYPE, every value)', async () => {
    const secret = 'redis-scan-hmac-secret-5150';
    const method = await http(s.t.url, `/vault-forward/configs/${s.configId}/authentications`, {
      method: 'POST',
      token: s.token,
      body: {
        kind: 'hmac-signature',
        label: 'scan',
        fields: { secret, algorithm: 'sha256', encoding: 'hex', header: 'X-Sig' },
      },
    });
    // One job ends, one waits for its next attempt, so both kinds of BullMQ job exist while we look.
    s.downstream.script('/scan-wait', [{ status: 503, headers: { 'retry-after': '300' } }]);
    const headers = {
      'x-vault-forward-authentications': method.body.id,
      'x-vault-forward-header-authorization': 'Bearer scan-credential-8842',
    };
    await ended(s, (await queue(s, '/scan-ok', { headers })).body.id);
    const waiting = (await queue(s, '/scan-wait', { headers })).body.id as string;
    await waitFor(
      async () =>
        (await http(s.t.url, `/vault-forward/jobs/${waiting}`, { token: s.token })).body.attempts?.length === 1,
    );
    const dump = await dumpRedis(s.env.FORWARD_QUEUE_NAME);
    expect(dump).toContain(waiting); // the scan does see our jobs
    for (const needle of [s.card.number, '"cvv":"739"', secret, 'scan-credential-8842'])
      expect(dump).not.toContain(needle);
  });
});

describe('Queued forwards on PostgreSQL (QUEUE_BACKEND=postgres)', () => {
  let s: Setup;

  beforeAll(async () => {
    s = await setUp('postgres');
  }, 90_000);

  afterAll(async () => stopQueuedSetup(s), 30_000);

  it('the 202 flow, a retried 503 and a 400 end as on Redis', async () => {
    s.downstream.script('/pg-flaky', [{ status: 503 }, { status: 200, body: '{"ok":1}' }]);
    s.downstream.script('/pg-bad', [{ status: 400 }]);
    const [ok, flaky, bad] = await Promise.all([queue(s, '/pg-ok'), queue(s, '/pg-flaky'), queue(s, '/pg-bad')]);
    for (const r of [ok, flaky, bad]) expect(r.status).toBe(202);
    expect((await ended(s, ok.body.id)).body).toMatchObject({ status: 'succeeded', response: { status: 200 } });
    expect((await ended(s, flaky.body.id)).body.attempts.map((a: { status: number }) => a.status)).toEqual([503, 200]);
    expect((await ended(s, bad.body.id)).body).toMatchObject({ status: 'failed', attempts: [{ status: 400 }] });
    expect(s.downstream.requestsTo('/pg-ok')[0].body.toString()).toContain(s.card.number);
  });

  it('an ended attempt delivered again (BullMQ removed it on completion) is refused by the claim: not sent twice', async () => {
    await deliverEndedAttemptAgain(
      s,
      '/pg-once',
      async (bullJobId) =>
        Number(
          (
            await s.t.db.query<Array<{ n: number }>>(
              `SELECT count(*)::int AS n FROM bullmq.job WHERE queue = $1 AND id = $2`,
              [s.env.FORWARD_QUEUE_NAME, bullJobId],
            )
          )[0].n,
        ) === 1,
    );
  });

  it('a pg_dump (application and bullmq schemas) holds no card number, CVV or credential in clear', async () => {
    s.downstream.script('/pg-wait', [{ status: 503, headers: { 'retry-after': '300' } }]);
    const headers = { 'x-vault-forward-header-authorization': 'Bearer pg-credential-3317' };
    const waiting = (await queue(s, '/pg-wait', { headers })).body.id as string;
    await waitFor(
      async () =>
        (await http(s.t.url, `/vault-forward/jobs/${waiting}`, { token: s.token })).body.attempts?.length === 1,
    );
    const dump = execFileSync('pg_dump', ['--no-owner', process.env.TEST_DATABASE_URL!], {
      maxBuffer: 512 * 1024 * 1024,
    }).toString('utf8');
    expect(dump).toContain(waiting);
    expect(dump).toContain('bullmq');
    for (const needle of [s.card.number, '"cvv":"739"', 'pg-credential-3317']) expect(dump).not.toContain(needle);
  });
});

describe('QUEUE_BACKEND=none', () => {
  let t: TestApp;

  afterAll(async () => t?.close());

  it('a queued forward is 503 with Retry-After and keeps no job; a synchronous one works', async () => {
    const downstream = await startScriptedDownstream();
    try {
      t = await startTestApp({ env: { QUEUE_BACKEND: 'none', FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
      const merchant = (await createMerchantAccount(t)).id;
      const token = await (await createApiKey(t, merchant)).token();
      await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'x', hosts: [`127.0.0.1:${downstream.port}`] },
      });
      const headers = { 'x-vault-forward-url': `${downstream.url}/x`, 'x-vault-forward-http-method': 'POST' };
      const refused = await http(t.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: { ...headers, prefer: 'respond-async' },
      });
      expectProblem(refused, 503, 'forward-queue-unavailable');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(
        await t.db.query(`SELECT 1 FROM vault_forward_jobs WHERE merchant_account_id = $1`, [merchant]),
      ).toHaveLength(0);
      expect((await http(t.url, '/vault-forward', { method: 'POST', token, headers })).status).toBe(200);
    } finally {
      await downstream.close();
    }
  });
});

/** Every key of the test Redis with its type and whole value, as one text. */
/**
 * Every key this run's app could have written: all keys but other runs' BullMQ queues (`bull:<other>:…`),
 * which belong to other test files and benchmarks sharing this Redis.
 */
async function dumpRedis(ownQueue: string): Promise<string> {
  const redis = new Redis(testRedisUrl());
  const parts: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        if (key.startsWith('bull:') && !key.startsWith(`bull:${ownQueue}:`)) continue;
        const type = await redis.type(key);
        let value: unknown;
        if (type === 'string') value = await redis.getBuffer(key).then((b) => b?.toString('latin1'));
        else if (type === 'hash') value = await redis.hgetall(key);
        else if (type === 'list') value = await redis.lrange(key, 0, -1);
        else if (type === 'set') value = await redis.smembers(key);
        else if (type === 'zset') value = await redis.zrange(key, '0', '-1', 'WITHSCORES');
        else if (type === 'stream') value = await redis.xrange(key, '-', '+');
        parts.push(`${key} ${type} ${JSON.stringify(value)}`);
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return parts.join('\n');
}
