import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Gr4vy, withToken } from '@gr4vy/sdk';
import { ResponseValidationError } from '@gr4vy/sdk/models/errors/responsevalidationerror';
import { CheckoutSessionsRepository } from '../../src/modules/payments/checkout-sessions/checkout-sessions.repository';
import { CheckoutSessionPurge } from '../../src/modules/payments/checkout-sessions/checkout-session-purge';
import { createApiKey } from '../factories/api-keys';
import { cardNumber, createCard } from '../factories/cards';
import { createCheckoutSession } from '../factories/checkout-sessions';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { endedJob, startWorker, WorkerProcess } from '../support/forward-jobs';
import { checkedGr4vy, expectNoSdkViolations } from '../support/checked-clients';
import { expectProblem, http, HttpResult } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

const run = promisify(execFile);

// Every SDK answer is held against the document (and the strict check) in its response hook.
afterEach(expectNoSdkViolations);

/**
 * Checkout sessions end to end: the official SDK for the session routes and for storing a session's
 * card, then forwards that fill a session's card and security code, synchronously and through a real
 * worker, and what is left of a session once it has expired (raw rows, a pg_dump, the logs).
 */
describe('Checkout sessions', () => {
  let t: TestApp;
  let worker: WorkerProcess;
  let downstream: Downstream;
  let gr4vy: Gr4vy;
  let merchant: string;
  let token: string;
  /** Every card number and security code a test used: none may appear in a log line. */
  const secrets: string[] = [];

  beforeAll(async () => {
    const env = {
      QUEUE_BACKEND: 'postgres',
      FORWARD_QUEUE_NAME: `test-sessions-${randomUUID()}`,
      FORWARD_INSECURE_HOSTS: '127.0.0.1',
      FORWARD_RETRY_BASE_MS: '400',
    };
    downstream = await startHttpDownstream();
    t = await startTestApp({ env });
    worker = await startWorker(env);
    merchant = (await createMerchantAccount(t)).id;
    const key = await createApiKey(t, merchant);
    token = await key.token();
    gr4vy = checkedGr4vy(t.url, {
      merchantAccountId: merchant,
      bearerAuth: withToken({ privateKey: key.privateKeyPem }),
    });
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Sessions', hosts: [`127.0.0.1:${downstream.port}`] },
    });
    expect(config.status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    worker?.child.kill('SIGTERM');
    await worker?.exited;
    await t?.close();
    await downstream?.close();
  }, 30_000);

  afterAll(() => {
    // Checked last, over the API's lines and the worker's: no card number and no security code, anywhere.
    // A 3-digit code in quotes can also be a length the request log states ("content-length":"125"):
    // those numbers are the log's own, not a leak, so they are taken out before looking.
    const logs = (t.logs.text + worker.output()).replace(/\\?"content-length\\?":\\?"[0-9]+\\?"/g, '');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(logs).not.toContain(secret);
  });

  function card(prefix = '4', length = 16) {
    const number = cardNumber(prefix, length);
    const security_code =
      prefix === '37' ? String(1000 + Math.floor(Math.random() * 9000)) : String(100 + Math.floor(Math.random() * 900));
    secrets.push(number, number.slice(-12));
    // A code is short: it is looked for in the logs as the JSON value a leak would print.
    secrets.push(`"${security_code}"`);
    return { number, expiration_date: '07/31', security_code };
  }

  function forward(
    headers: Record<string, string>,
    body: string,
    extra: Record<string, string> = {},
  ): Promise<HttpResult> {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${downstream.url}/pay`,
        'x-vault-forward-http-method': 'POST',
        'content-type': 'application/json',
        ...headers,
        ...extra,
      },
      rawBody: body,
    });
  }

  /** POST /payment-methods {method: "checkout-session"}: stores a session's card (never its code). */
  function storeSessionCard(sessionId: string): Promise<HttpResult> {
    return http(t.url, '/payment-methods', {
      method: 'POST',
      token,
      body: { method: 'checkout-session', id: sessionId },
    });
  }

  const FULL_BODY =
    '{"number":"{{ CARD_NUMBER_1 }}",' +
    '"expiry":"{{ CARD_EXPIRATION_DATE_MM_1 }}/{{ CARD_EXPIRATION_DATE_YY_1 }}","cvv":"{{ CARD_SECURITY_CODE_1 }}"}';

  it('the SDK creates, gets, updates and deletes a session; the answers parse with its schemas', async () => {
    // The expiry is an hour from when the service took the request: between the clock before and after it.
    const beforeCreate = Date.now();
    const created = await gr4vy.checkoutSessions.create({ metadata: { order: 'A-1' } });
    const afterCreate = Date.now();
    expect(created).toMatchObject({ type: 'checkout-session', metadata: { order: 'A-1' } });
    expect(created.expiresAt).toBeInstanceOf(Date);
    expect(created.expiresAt.getTime()).toBeGreaterThanOrEqual(beforeCreate - 1_000 + 3_600_000);
    expect(created.expiresAt.getTime()).toBeLessThanOrEqual(afterCreate + 3_600_000);
    expect(created.paymentMethod).toBeNull();

    expect(await gr4vy.checkoutSessions.get(created.id)).toMatchObject({ id: created.id, metadata: { order: 'A-1' } });

    // Shortened from now; the SDK always sends expires_in (3600 unless told otherwise).
    const beforeUpdate = Date.now();
    const updated = await gr4vy.checkoutSessions.update({ metadata: { order: 'A-2' }, expiresIn: 600 }, created.id);
    const afterUpdate = Date.now();
    expect(updated.metadata).toEqual({ order: 'A-2' });
    expect(updated.expiresAt.getTime()).toBeGreaterThanOrEqual(beforeUpdate - 1_000 + 600_000);
    expect(updated.expiresAt.getTime()).toBeLessThanOrEqual(afterUpdate + 600_000);

    await gr4vy.checkoutSessions.delete(created.id);
    await expect(gr4vy.checkoutSessions.get(created.id)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('collects a card without echoing it, keeps it sealed, and the SDK stores it as a payment method without its code', async () => {
    const c = card();
    const session = await gr4vy.checkoutSessions.create();
    const fields = await http(t.url, `/checkout/sessions/${session.id}/fields`, {
      method: 'PUT',
      token,
      body: { payment_method: { method: 'card', ...c } },
    });
    expect(fields.status).toBe(200);
    expect(fields.body.payment_method).toEqual({
      type: 'payment-method',
      method: 'card',
      id: null,
      label: c.number.slice(-4),
      scheme: 'visa',
      expiration_date: '07/31',
    });
    expect(fields.text).not.toContain(c.number.slice(-12));
    expect(fields.text).not.toContain(`"${c.security_code}"`);
    expect((await gr4vy.checkoutSessions.get(session.id)).paymentMethod).toMatchObject({
      label: c.number.slice(-4),
      scheme: 'visa',
    });

    // Raw row while alive: everything secret is ciphertext.
    const [row] = await t.db.query(
      `SELECT row_to_json(s)::text AS text, ciphertext, security_code_ciphertext, wrapped_key FROM checkout_sessions s WHERE id = $1`,
      [session.id],
    );
    for (const blob of [row.ciphertext, row.security_code_ciphertext, row.wrapped_key] as Buffer[]) {
      expect(blob.length).toBeGreaterThan(28);
      expect(blob.includes(Buffer.from(c.number.slice(-12)))).toBe(false);
      expect(blob.includes(Buffer.from(c.security_code))).toBe(false);
    }
    expect(row.text).not.toContain(c.number.slice(-12));

    // The SDK's CheckoutSessionPaymentMethodCreate. (Its PaymentMethod schema is another change's: read the raw
    // answer if it still refuses ours.)
    const result = await gr4vy.paymentMethods
      .create({ method: 'checkout-session', id: session.id })
      .catch((e: unknown) => e);
    const stored = (result instanceof ResponseValidationError ? result.rawValue : result) as {
      id: string;
      label: string;
      expiration_date?: string;
      expirationDate?: string;
    };
    expect(stored.label).toBe(c.number.slice(-4));
    const pm = await http(t.url, `/payment-methods/${stored.id}`, { token });
    expect(pm.body).toMatchObject({ label: c.number.slice(-4), expiration_date: '07/31', scheme: 'visa' });
    // The number is the session's; the code went nowhere near the payment method.
    const echoed = await forward({ 'x-vault-forward-payment-methods': stored.id }, '{"number":"{{ CARD_NUMBER_1 }}"}');
    expect(echoed.status).toBe(200);
    expect(JSON.parse(downstream.received.at(-1)!.body.toString())).toEqual({ number: c.number });
    const [pmRow] = await t.db.query(`SELECT row_to_json(p)::text AS text FROM payment_methods p WHERE id = $1`, [
      stored.id,
    ]);
    expect(pmRow.text).not.toContain(`"${c.security_code}"`);
  });

  it('forwards the session card and its security code synchronously, records it durably, then erases the code', async () => {
    const c = card('37', 15);
    const session = await createCheckoutSession(t, token, { card: c });
    const answer = await forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY);
    expect(answer.status).toBe(200);
    expect(JSON.parse(downstream.received.at(-1)!.body.toString())).toEqual({
      number: c.number,
      expiry: '07/31',
      cvv: c.security_code,
    });

    const record = await waitFor(async () => {
      const r = await http(t.url, `/vault-forward/requests/${answer.headers.get('x-vault-forward-request-id')}`, {
        token,
      });
      return r.body?.status === 200 && r;
    });
    expect(record.body).toMatchObject({ checkout_session_id: session.id, payment_method_ids: [] });

    // Answered: the code is gone from the row; number and expiry stay until expiry.
    const [row] = await t.db.query(
      `SELECT security_code_ciphertext, ciphertext, security_code_erased_at FROM checkout_sessions WHERE id = $1`,
      [session.id],
    );
    expect(row.security_code_ciphertext).toBeNull();
    expect(row.ciphertext).not.toBeNull();
    expect(row.security_code_erased_at).not.toBeNull();
    expect(
      expectProblem(
        await forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY),
        410,
        'checkout-session-security-code-erased',
      ).errors,
    ).toEqual([
      { location: 'header', name: 'x-vault-forward-checkout-session', message: 'security code erased after use' },
    ]);
    const again = await forward({ 'x-vault-forward-checkout-session': session.id }, '{"number":"{{ CARD_NUMBER_1 }}"}');
    expect(again.status).toBe(200);
  });

  it('a 402 decline erases the code too: the target decided', async () => {
    const c = card();
    const session = await createCheckoutSession(t, token, { card: c });
    const declined = await forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY, {
      'x-vault-forward-url': `${downstream.url}/status/402`,
    });
    expect(declined.status).toBe(402);
    expect(declined.headers.get('x-vault-forward-error')).toBeNull();
    const [row] = await t.db.query(`SELECT security_code_ciphertext FROM checkout_sessions WHERE id = $1`, [
      session.id,
    ]);
    expect(row.security_code_ciphertext).toBeNull();
    expectProblem(
      await forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY),
      410,
      'checkout-session-security-code-erased',
    );
  });

  // Issue 19 (7): the code leaves at most once. Erasure follows the first answer, so without a hold every
  // forward that loaded the code before that answer sent it.
  it('20 parallel forwards of one session send its security code once; the others get 409 checkout-session-in-use', async () => {
    const c = card();
    const session = await createCheckoutSession(t, token, { card: c });
    const sentCode = () =>
      downstream.received.filter((r) => r.url === '/slow' && r.body.includes(Buffer.from(c.number))).length;
    // /slow answers after 3 s: the first forward holds the code all the while the others arrive.
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY, {
          'x-vault-forward-url': `${downstream.url}/slow`,
        }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      const problem = expectProblem(refused, refused.status, refused.body.code);
      expect([
        [409, 'checkout-session-in-use'],
        [410, 'checkout-session-security-code-erased'],
      ]).toContainEqual([refused.status, problem.code]);
      if (problem.code === 'checkout-session-in-use')
        expect(problem.errors).toEqual([
          {
            location: 'header',
            name: 'x-vault-forward-checkout-session',
            message: 'security code in use by another forward',
          },
        ]);
    }
    expect(answers.some((a) => a.body?.code === 'checkout-session-in-use')).toBe(true);
    expect(sentCode()).toBe(1);
  });

  it('a 5xx answer or a failure releases the code for a retry; a hold whose lease lapsed (a dead holder) is taken over', async () => {
    const c = card();
    const session = await createCheckoutSession(t, token, { card: c });
    const claim = async () =>
      (
        await t.db.query(
          `SELECT security_code_claim, security_code_claimed_until FROM checkout_sessions WHERE id = $1`,
          [session.id],
        )
      )[0];
    const sendTo = (path: string) =>
      forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY, {
        'x-vault-forward-url': `${downstream.url}${path}`,
      });

    expect((await sendTo('/status/503')).status).toBe(503);
    expect(await claim()).toEqual({ security_code_claim: null, security_code_claimed_until: null });
    // No answer in time (504, thrown rather than answered): released too.
    const late = await forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY, {
      'x-vault-forward-url': `${downstream.url}/slow`,
      'x-vault-forward-timeout': '1',
    });
    expectProblem(late, 504, 'downstream-timeout');
    expect(await claim()).toEqual({ security_code_claim: null, security_code_claimed_until: null });

    // Another process holds it (a row state, whichever process wrote it): 409, nothing sent.
    await t.db.query(
      `UPDATE checkout_sessions SET security_code_claim = $2, security_code_claimed_until = now() + interval '1 minute' WHERE id = $1`,
      [session.id, randomUUID()],
    );
    const before = downstream.received.length;
    expectProblem(await sendTo('/pay'), 409, 'checkout-session-in-use');
    expect(downstream.received.length).toBe(before);
    // Its holder died: once the lease lapses the code can go, once.
    await t.db.query(
      `UPDATE checkout_sessions SET security_code_claimed_until = now() - interval '1 second' WHERE id = $1`,
      [session.id],
    );
    expect((await sendTo('/pay')).status).toBe(200);
    expect(JSON.parse(downstream.received.at(-1)!.body.toString()).cvv).toBe(c.security_code);
    expect(await claim()).toEqual({ security_code_claim: null, security_code_claimed_until: null });
    expectProblem(await sendTo('/pay'), 410, 'checkout-session-security-code-erased');
  });

  it('forwards a stored card with a freshly collected code (method id)', async () => {
    const c = card();
    const pm = await createCard(t, merchant, {
      number: c.number,
      expiration_date: '09/32',
      cardholder_name: 'Ada Lovelace',
    });
    const session = await createCheckoutSession(t, token);
    const fields = await http(t.url, `/checkout/sessions/${session.id}/fields`, {
      method: 'PUT',
      token,
      body: { payment_method: { method: 'id', id: pm.id, security_code: c.security_code } },
    });
    expect(fields.status).toBe(200);
    expect(fields.body.payment_method).toMatchObject({
      id: pm.id,
      label: c.number.slice(-4),
      expiration_date: '09/32',
    });
    const answer = await forward(
      { 'x-vault-forward-checkout-session': session.id },
      '{"n":"{{ CARD_NUMBER_1 }}","e":"{{ CARD_EXPIRATION_DATE_1 }}","h":"{{ CARDHOLDER_NAME_1 }}","c":"{{ CARD_SECURITY_CODE_1 }}"}',
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(downstream.received.at(-1)!.body.toString())).toEqual({
      n: c.number,
      e: '09/32',
      h: 'Ada Lovelace',
      c: c.security_code,
    });
    // Its card is a payment method already.
    expectProblem(await storeSessionCard(session.id), 409, 'checkout-session-card-is-stored');
  });

  it('forwards the session card through the queue (Prefer: respond-async): the worker loads the code when it runs', async () => {
    const c = card();
    const session = await createCheckoutSession(t, token, { card: c });
    const accepted = await forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY, {
      prefer: 'respond-async',
    });
    expect(accepted.status).toBe(202);
    // The stored plan holds the session id, not the code.
    const [plan] = await t.db.query(`SELECT ciphertext FROM vault_forward_job_plans WHERE job_id = $1`, [
      accepted.body.id,
    ]);
    expect((plan.ciphertext as Buffer).includes(Buffer.from(c.security_code))).toBe(false);
    const job = await endedJob(t.url, token, accepted.body.id);
    expect(job.body.status).toBe('succeeded');
    const sent = downstream.received.map((r) => r.body.toString()).find((b) => b.includes(c.number));
    expect(JSON.parse(sent!)).toEqual({ number: c.number, expiry: '07/31', cvv: c.security_code });
  });

  it('a queued attempt finds the code held by another forward: 409 checkout-session-in-use, retried, sent once freed', async () => {
    const c = card();
    const session = await createCheckoutSession(t, token, { card: c });
    await t.db.query(
      `UPDATE checkout_sessions SET security_code_claim = $2, security_code_claimed_until = now() + interval '1 minute' WHERE id = $1`,
      [session.id, randomUUID()],
    );
    const accepted = await forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY, {
      prefer: 'respond-async',
      'x-vault-forward-http-method': 'PUT',
      'x-vault-forward-max-attempts': '20',
    });
    expect(accepted.status).toBe(202);
    const job = (predicate: (body: any) => boolean, what: string) =>
      waitFor(
        async () => {
          const r = await http(t.url, `/vault-forward/jobs/${accepted.body.id}`, { token });
          return predicate(r.body) && r.body;
        },
        { timeoutMs: 30_000, what },
      );
    await job((b) => b.attempts.length >= 1 && b.attempts[0].error_type !== null, 'a first attempt refused');
    await t.db.query(`UPDATE checkout_sessions SET security_code_claimed_until = now() WHERE id = $1`, [session.id]);
    const ended = await job((b) => ['succeeded', 'failed'].includes(b.status), 'the queued forward to end');
    expect(ended.status).toBe('succeeded');
    const errors = ended.attempts.map((a: { error_type: string | null }) => a.error_type);
    expect(errors.at(-1)).toBeNull();
    expect(new Set(errors.slice(0, -1))).toEqual(new Set(['checkout-session-in-use']));
    const sent = downstream.received.filter((r) => r.body.includes(Buffer.from(c.number)));
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0].body.toString()).cvv).toBe(c.security_code);
  });

  it('a queued job takes back a hold of its own at once (a worker died in an attempt holding the code)', async () => {
    const c = card();
    const session = await createCheckoutSession(t, token, { card: c });
    const hold = (holder: string) =>
      t.db.query(
        `UPDATE checkout_sessions SET security_code_claim = $2, security_code_claimed_until = now() + interval '1 minute' WHERE id = $1`,
        [session.id, holder],
      );
    await hold(randomUUID());
    const accepted = await forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY, {
      prefer: 'respond-async',
      'x-vault-forward-http-method': 'PUT',
      'x-vault-forward-max-attempts': '20',
    });
    expect(accepted.status).toBe(202);
    const id = accepted.body.id as string;
    const job = (predicate: (body: any) => boolean, what: string) =>
      waitFor(
        async () => {
          const r = await http(t.url, `/vault-forward/jobs/${id}`, { token });
          return predicate(r.body) && r.body;
        },
        { timeoutMs: 30_000, what },
      );
    await job((b) => b.attempts.length >= 1 && b.attempts[0].error_type !== null, 'a first attempt refused');
    // The row as a worker killed mid-attempt leaves it: held by this job, the lease a minute from lapsing.
    await hold(id);
    const ended = await job((b) => ['succeeded', 'failed'].includes(b.status), 'the queued forward to end');
    expect(ended.status).toBe('succeeded');
    expect(downstream.received.filter((r) => r.body.includes(Buffer.from(c.number)))).toHaveLength(1);
  });

  it('a queued forward whose session expires before the worker runs fails clearly (410), sending nothing', async () => {
    const c = card();
    const session = await createCheckoutSession(t, token, { card: c, expiresIn: 2 });
    const accepted = await forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY, {
      prefer: 'respond-async',
      'x-vault-forward-url': `${downstream.url}/status/503`,
      'x-vault-forward-http-method': 'PUT',
      'x-vault-forward-max-attempts': '10',
    });
    // Accepted (the session was alive); it then expires and the retry, loading again, finds it gone.
    expect(accepted.status).toBe(202);
    const job = await endedJob(t.url, token, accepted.body.id, 30_000);
    expect(job.body.status).toBe('failed');
    expect(job.body.attempts.map((a: { error_type: string | null }) => a.error_type)).toContain(
      'checkout-session-expired',
    );
  });

  it('an expired session is 410 everywhere, and nothing of its card or code is left in the database (raw rows, pg_dump)', async () => {
    const c = card();
    const session = await createCheckoutSession(t, token, { card: c, expiresIn: 2 });
    const [alive] = await t.db.query(
      `SELECT ciphertext IS NOT NULL AND security_code_ciphertext IS NOT NULL AS sealed FROM checkout_sessions WHERE id = $1`,
      [session.id],
    );
    expect(alive.sealed).toBe(true);
    await waitFor(
      async () =>
        (await t.db.query(`SELECT expires_at <= now() AS due FROM checkout_sessions WHERE id = $1`, [session.id]))[0]
          .due,
      { timeoutMs: 5_000, intervalMs: 100 },
    );

    // The periodic purge (one UPDATE, safe from any number of processes): run it twice, as two processes would.
    await Promise.all([t.get(CheckoutSessionPurge).run(), t.get(CheckoutSessionPurge).run()]);
    const [row] = await t.db.query(`SELECT * FROM checkout_sessions WHERE id = $1`, [session.id]);
    for (const column of [
      'ciphertext',
      'security_code_ciphertext',
      'wrapped_key',
      'master_key_id',
      'label',
      'scheme',
      'expiration_date',
      'card_source',
    ]) {
      expect([column, row[column]]).toEqual([column, null]);
    }
    expect(row.erased_at).not.toBeNull();

    expectProblem(
      await forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY),
      410,
      'checkout-session-expired',
    );
    expectProblem(await http(t.url, `/checkout/sessions/${session.id}`, { token }), 410, 'checkout-session-expired');
    expectProblem(
      await http(t.url, `/checkout/sessions/${session.id}/fields`, {
        method: 'PUT',
        token,
        body: { payment_method: { method: 'card', ...card() } },
      }),
      410,
      'checkout-session-expired',
    );
    expectProblem(await storeSessionCard(session.id), 410, 'checkout-session-expired');

    const { stdout } = await run('pg_dump', ['--data-only', process.env.TEST_DATABASE_URL!], {
      maxBuffer: 256 * 1024 * 1024,
    });
    expect(stdout).toContain(session.id);
    expect(stdout).not.toContain(c.number);
    expect(stdout).not.toContain(c.number.slice(-12));
    // The session's own line holds no code. Its ids and timestamps are left out: a 3- or 4-digit string occurs in
    // them by chance now and then.
    const line = stdout.split('\n').find((l) => l.startsWith(session.id))!;
    expect(line).toBeDefined();
    const values = line
      .split('\t')
      .filter((v) => v !== merchant)
      .filter((v) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(v))
      .filter((v) => !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}(:\d{2})?$/.test(v))
      .join('\t');
    expect(values).toContain('\\N');
    expect(values).not.toContain(c.security_code);
    expect(values).not.toContain(c.number.slice(-4));
  });

  it('is erased at read time when the purge has not run yet', async () => {
    const session = await createCheckoutSession(t, token, { card: card(), expiresIn: 2 });
    await waitFor(
      async () =>
        (await t.db.query(`SELECT expires_at <= now() AS due FROM checkout_sessions WHERE id = $1`, [session.id]))[0]
          .due,
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(
      expectProblem(
        await forward({ 'x-vault-forward-checkout-session': session.id }, '{"n":"{{ CARD_NUMBER_1 }}"}'),
        410,
        'checkout-session-expired',
      ).errors,
    ).toEqual([{ location: 'header', name: 'x-vault-forward-checkout-session', message: 'checkout session expired' }]);
    const [row] = await t.db.query(
      `SELECT ciphertext, security_code_ciphertext, wrapped_key, erased_at FROM checkout_sessions WHERE id = $1`,
      [session.id],
    );
    expect(row).toMatchObject({ ciphertext: null, security_code_ciphertext: null, wrapped_key: null });
    expect(row.erased_at).not.toBeNull();
  });

  it('the purge erases expired sessions and deletes those a day past expiry, and says how many', async () => {
    const erasedOnly = await createCheckoutSession(t, token, { card: card() });
    const deletedToo = await createCheckoutSession(t, token, { card: card() });
    await t.db.query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      erasedOnly.id,
    ]);
    await t.db.query(`UPDATE checkout_sessions SET expires_at = now() - interval '2 days' WHERE id = $1`, [
      deletedToo.id,
    ]);
    // Called directly for its counts (the timer's run() only logs them); other files' sessions may be counted too.
    const counts = await t.get(CheckoutSessionsRepository).purgeExpired();
    expect(counts).toEqual({ erased: expect.any(Number), deleted: expect.any(Number) });
    expect(counts.erased).toBeGreaterThanOrEqual(2);
    expect(counts.deleted).toBeGreaterThanOrEqual(1);
    const rows = await t.db.query<Array<{ id: string; erased: boolean }>>(
      `SELECT id, erased_at IS NOT NULL AS erased FROM checkout_sessions WHERE id = ANY($1::uuid[])`,
      [[erasedOnly.id, deletedToo.id]],
    );
    expect(rows).toEqual([{ id: erasedOnly.id, erased: true }]);
  });

  it('a stored card deleted after it was named: 409 no card, and the hold the forward took on the code is let go', async () => {
    const c = card();
    const pm = await createCard(t, merchant, { number: c.number, expiration_date: '09/32' });
    const session = await createCheckoutSession(t, token);
    const fields = await http(t.url, `/checkout/sessions/${session.id}/fields`, {
      method: 'PUT',
      token,
      body: { payment_method: { method: 'id', id: pm.id, security_code: c.security_code } },
    });
    expect(fields.status).toBe(200);
    expect((await http(t.url, `/payment-methods/${pm.id}`, { method: 'DELETE', token })).status).toBe(204);
    const before = downstream.received.length;
    // The code is there (the claim succeeds); the card is not: the forward fails after taking the hold.
    const refused = await forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY);
    expect(expectProblem(refused, 409, 'checkout-session-has-no-card').errors).toEqual([
      { location: 'header', name: 'x-vault-forward-checkout-session', message: 'no card collected' },
    ]);
    expect(downstream.received.length).toBe(before);
    const [row] = await t.db.query(
      `SELECT security_code_claim, security_code_claimed_until, security_code_ciphertext IS NOT NULL AS code
         FROM checkout_sessions WHERE id = $1`,
      [session.id],
    );
    expect(row).toEqual({ security_code_claim: null, security_code_claimed_until: null, code: true });
  });

  it('a sealed card or code that does not open: 500, nothing sent, the log names the session, the hold is let go', async () => {
    for (const column of ['ciphertext', 'security_code_ciphertext']) {
      const session = await createCheckoutSession(t, token, { card: card() });
      // One bit of the sealed part flipped, as in a damaged or tampered row: planning does not open it, the send does.
      const [{ sealed }] = await t.db.query(`SELECT ${column} AS sealed FROM checkout_sessions WHERE id = $1`, [
        session.id,
      ]);
      const flipped = Buffer.from(sealed as Buffer);
      flipped[flipped.length - 1] ^= 1;
      await t.db.query(`UPDATE checkout_sessions SET ${column} = $2 WHERE id = $1`, [session.id, flipped]);
      const before = downstream.received.length;
      expectProblem(
        await forward({ 'x-vault-forward-checkout-session': session.id }, FULL_BODY),
        500,
        'internal-error',
      );
      expect(downstream.received.length).toBe(before);
      const part = column === 'ciphertext' ? 'card-number' : 'security-code';
      expect(t.logs.text).toContain(`checkout session ${session.id}: the ${part} does not authenticate`);
      const [row] = await t.db.query(
        `SELECT security_code_claim, security_code_claimed_until FROM checkout_sessions WHERE id = $1`,
        [session.id],
      );
      expect([column, row]).toEqual([column, { security_code_claim: null, security_code_claimed_until: null }]);
    }
  });

  it('deleting a session deletes its row, secrets with it', async () => {
    const session = await createCheckoutSession(t, token, { card: card() });
    expect((await http(t.url, `/checkout/sessions/${session.id}`, { method: 'DELETE', token })).status).toBe(204);
    expect(await t.db.query(`SELECT 1 FROM checkout_sessions WHERE id = $1`, [session.id])).toEqual([]);
    expect(
      expectProblem(
        await forward({ 'x-vault-forward-checkout-session': session.id }, '{"n":"{{ CARD_NUMBER_1 }}"}'),
        400,
        'unknown-checkout-session',
      ).errors,
    ).toEqual([{ location: 'header', name: 'x-vault-forward-checkout-session', message: 'unknown checkout session' }]);
  });

  describe('bad cases', () => {
    it('both card headers → 400 naming both', async () => {
      const session = await createCheckoutSession(t, token, { card: card() });
      const pm = await createCard(t, merchant);
      const problem = expectProblem(
        await forward(
          { 'x-vault-forward-checkout-session': session.id, 'x-vault-forward-payment-methods': pm.id },
          '{}',
        ),
        400,
        'invalid-forward-header',
      );
      expect(problem.errors.map((e: { name: string }) => e.name)).toEqual([
        'x-vault-forward-payment-methods',
        'x-vault-forward-checkout-session',
      ]);
    });

    it('CARD_SECURITY_CODE with payment methods (or none) → 400 naming the placeholder', async () => {
      const pm = await createCard(t, merchant);
      for (const headers of [{ 'x-vault-forward-payment-methods': pm.id }, {}] as Array<Record<string, string>>) {
        const problem = expectProblem(
          await forward(headers, '{"cvv":"{{ CARD_SECURITY_CODE_1 }}"}'),
          400,
          'invalid-placeholder',
        );
        expect(problem.detail).toContain('CARD_SECURITY_CODE_1');
      }
      const problem = expectProblem(
        await forward({ 'x-vault-forward-payment-methods': pm.id }, '{"cvv":"{{ CARD_SECURITY_CODE_1 }}"}'),
        400,
        'invalid-placeholder',
      );
      expect(problem.detail).toContain('x-vault-forward-checkout-session');
    });

    it('a session has one card: _2 is out of range; a malformed session id is refused', async () => {
      const session = await createCheckoutSession(t, token, { card: card() });
      const problem = expectProblem(
        await forward({ 'x-vault-forward-checkout-session': session.id }, '{"n":"{{ CARD_NUMBER_2 }}"}'),
        400,
        'invalid-placeholder',
      );
      expect(problem.detail).toContain('x-vault-forward-checkout-session lists 1');
      expectProblem(await forward({ 'x-vault-forward-checkout-session': 'nope' }, '{}'), 400, 'invalid-forward-header');
    });

    it('a session without a card → 409', async () => {
      const session = await createCheckoutSession(t, token);
      expectProblem(
        await forward({ 'x-vault-forward-checkout-session': session.id }, '{"n":"{{ CARD_NUMBER_1 }}"}'),
        409,
        'checkout-session-has-no-card',
      );
      expectProblem(await storeSessionCard(session.id), 409, 'checkout-session-has-no-card');
    });

    it('wrong method, bad card, bad code, stray fields → 400 naming the field, never echoing it', async () => {
      const session = await createCheckoutSession(t, token);
      const c = card();
      const bad = [...c.number];
      bad[15] = String((Number(bad[15]) + 1) % 10);
      const cases: Array<[unknown, string]> = [
        [{ method: 'paypal', security_code: '123' }, 'payment_method.method'],
        [
          { method: 'card', number: bad.join(''), expiration_date: '07/31', security_code: '123' },
          'payment_method.number',
        ],
        [
          { method: 'card', number: c.number, expiration_date: '13/31', security_code: '123' },
          'payment_method.expiration_date',
        ],
        [
          { method: 'card', number: c.number, expiration_date: '07/31', security_code: '12a' },
          'payment_method.security_code',
        ],
        [
          { method: 'card', number: c.number, expiration_date: '07/31', security_code: '1234' },
          'payment_method.security_code',
        ],
        [
          { method: 'card', number: c.number, expiration_date: '07/31', security_code: '123', id: randomUUID() },
          'payment_method.id',
        ],
        [{ method: 'id', id: randomUUID(), security_code: '123' }, 'payment_method.id'],
        [{ method: 'id', id: randomUUID(), number: c.number, security_code: '123' }, 'payment_method.number'],
      ];
      for (const [payment_method, field] of cases) {
        const result = await http(t.url, `/checkout/sessions/${session.id}/fields`, {
          method: 'PUT',
          token,
          body: { payment_method },
        });
        const problem = expectProblem(result, 400, 'validation-failed');
        expect(problem.errors.map((e: { name: string }) => e.name)).toContain(field);
        expect(result.text).not.toContain(c.number.slice(-12));
        expect(result.text).not.toContain(bad.join('').slice(-12));
      }
      expect((await http(t.url, `/checkout/sessions/${session.id}`, { token })).body.payment_method).toBeNull();
    });

    it('oversize or malformed metadata, expires_in out of range, unknown fields → 400', async () => {
      const cases: Array<[unknown, string]> = [
        [{ metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
        [{ metadata: { k: 'x'.repeat(501) } }, 'metadata'],
        [{ metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata'],
        [{ metadata: { k: 1 } }, 'metadata'],
        [{ expires_in: 3601 }, 'expires_in'],
        [{ expires_in: 0 }, 'expires_in'],
        [{ amount: 100 }, 'amount'],
      ];
      for (const [body, field] of cases) {
        const problem = expectProblem(
          await http(t.url, '/checkout/sessions', { method: 'POST', token, body }),
          400,
          'validation-failed',
        );
        expect(problem.errors.map((e: { name: string }) => e.name)).toContain(field);
      }
    });

    it('another merchant’s session is 404 on every route, 400 on the forward route, and cannot be stored', async () => {
      const other = (await createMerchantAccount(t)).id;
      const otherToken = await (await createApiKey(t, other)).token();
      const session = await createCheckoutSession(t, otherToken, { card: card() });
      // An expiry opens nothing, so the envelope's binding to its merchant cannot catch a lookup that
      // forgot the merchant: only the lookup's own filter refuses these, synchronous and queued.
      const before = downstream.received.length;
      const extras: Array<Record<string, string>> = [{}, { prefer: 'respond-async' }];
      for (const extra of extras) {
        expectProblem(
          await forward(
            { 'x-vault-forward-checkout-session': session.id },
            '{"e":"{{ CARD_EXPIRATION_DATE_1 }}"}',
            extra,
          ),
          400,
          'unknown-checkout-session',
        );
      }
      expect(downstream.received.length).toBe(before);
      expectProblem(
        await http(t.url, `/checkout/sessions/${session.id}`, { token }),
        404,
        'checkout-session-not-found',
      );
      expectProblem(
        await http(t.url, `/checkout/sessions/${session.id}`, { method: 'PUT', token, body: {} }),
        404,
        'checkout-session-not-found',
      );
      expectProblem(
        await http(t.url, `/checkout/sessions/${session.id}/fields`, {
          method: 'PUT',
          token,
          body: { payment_method: { method: 'card', ...card() } },
        }),
        404,
        'checkout-session-not-found',
      );
      expectProblem(
        await http(t.url, `/checkout/sessions/${session.id}`, { method: 'DELETE', token }),
        404,
        'checkout-session-not-found',
      );
      expectProblem(await storeSessionCard(session.id), 404, 'checkout-session-not-found');
      expectProblem(
        await forward({ 'x-vault-forward-checkout-session': session.id }, '{"n":"{{ CARD_NUMBER_1 }}"}'),
        400,
        'unknown-checkout-session',
      );
      // Still there for its owner.
      expect((await http(t.url, `/checkout/sessions/${session.id}`, { token: otherToken })).status).toBe(200);
    });

    it('needs checkout-sessions scopes', async () => {
      const key = await createApiKey(t, merchant);
      expect(
        (
          await http(t.url, '/checkout/sessions', {
            method: 'POST',
            token: await key.token(['checkout-sessions.read']),
            body: {},
          })
        ).status,
      ).toBe(403);
      expect(
        (
          await http(t.url, '/checkout/sessions', {
            method: 'POST',
            token: await key.token(['checkout-sessions.write']),
            body: {},
          })
        ).status,
      ).toBe(201);
    });
  });
});
