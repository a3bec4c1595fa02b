import { createHmac } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { ForwardRecordBodyPurge } from '../../src/modules/forwarding/records/forward-record-body-purge';
import { cardNumber, createCard, storeCard } from '../factories/cards';
import { createCheckoutSession } from '../factories/checkout-sessions';
import { createMerchantWithToken } from '../factories/forwarding-merchants';
import { listenOnLoopback } from '../support/downstream';
import {
  endedJob,
  queuedForwardEnv,
  recordWithOutcome,
  startWorker,
  stopQueuedSetup,
  WorkerProcess,
} from '../support/forward-jobs';
import { http, HttpResult } from '../support/http';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { dataDump } from '../support/sink-texts';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * Decision 0104: a forward record keeps the request as sent with placeholder text where values were
 * filled, and the answer after the response rules, both capped, card numbers masked; read through
 * GET /vault-forward/requests/{id}. Decision 0138: only when its config asks (`record_bodies`, off by
 * default), nulled by the purge past the config's `record_bodies_retention_days` (1–30), never past the
 * operator's FORWARD_RECORD_BODY_RETENTION_DAYS.
 */
const DAY_MS = 86_400_000;

/** Distinctive values, searched for in rows, answers and logs. */
const TEMPLATE_SECRET = 'tmpl-SECRET-record-bodies-5d2e81';
const HMAC_METHOD_SECRET = 'hmac-SECRET-record-bodies-93ac07';
const CALLER_BEARER = 'Bearer sk_live_caller-token-record-bodies-11f4';
const HOLDER = 'Zebulon Quxworth-Abernathy';
const SECURITY_CODE = '739';
/** A card number the downstream puts in its answer outside any rule, and one the caller types into the body. */
/**
 * A card whose masked form (first six, last four) holds none of the short filled values: the test looks for
 * those in the records, where a masked number stands, so a random card must not carry one by chance.
 */
function numberAvoidingShortValues(prefix: string, length: number): string {
  for (;;) {
    const number = cardNumber(prefix, length);
    const masked = `${number.slice(0, 6)} ${number.slice(-4)}`;
    if (![SECURITY_CODE, '0431'].some((value) => masked.includes(value))) return number;
  }
}
const STRAY = numberAvoidingShortValues('5', 16);
const TYPED = numberAvoidingShortValues('3', 15);

const mac = (key: string, value: string) => createHmac('sha256', Buffer.from(key, 'utf8')).update(value).digest('hex');

/**
 * A PSP: /pay answers JSON with the card number and security code it received (the config's rules mask
 * and remove them) and a stray card number; /big answers 100 KiB of text that starts with the stray
 * number (no rule applies to text: it streams through); /echo answers the headers and body it got.
 */
async function startPsp() {
  const seen: Array<{ url: string; headers: IncomingHttpHeaders; body: string }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ url: req.url!, headers: req.headers, body });
      if (req.url === '/echo') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ headers: req.headers, body }));
      }
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end(`${STRAY} ${'b'.repeat(100 * 1024)}`);
      }
      const sent = JSON.parse(body) as { pan?: string; cvv?: string };
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, card: { number: sent.pan, cvv: sent.cvv ?? 'none' }, note: `ref ${STRAY}` }));
    });
  });
  return {
    ...(await listenOnLoopback(server)),
    seen,
  };
}

const BODY =
  '{"pan":"{{ CARD_NUMBER_1 }}","exp":"{{ CARD_EXPIRATION_DATE_1 }}",' +
  '"mmyy":"{{ CARD_EXPIRATION_DATE_MM_1 }}{{ CARD_EXPIRATION_DATE_YY_1 }}","name":"{{ CARDHOLDER_NAME_1 }}",' +
  '"mac":"{{ CARD_NUMBER_1 | hmac_sha256(SECRET.psp_key) }}","last4":"{{ CARD_NUMBER_1 | last4 }}",' +
  `"typed":"${TYPED}","literal":"\\\\{{ CARD_NUMBER_1 }}"}`;
const SESSION_BODY =
  '{"pan":"{{ CARD_NUMBER_1 }}","cvv":"{{ CARD_SECURITY_CODE_1 }}","exp":"{{ CARD_EXPIRATION_DATE_1 }}"}';

describe('Forward records keep the redacted request and answer when the config asks (decisions 0104, 0138)', () => {
  let env: Record<string, string>;
  // A database of its own: the purge below runs as at a later time, over every record of the database.
  let database: IsolatedDatabase;
  let t: TestApp;
  let worker: WorkerProcess;
  let psp: Awaited<ReturnType<typeof startPsp>>;
  let token: string;
  let card: { id: string; number: string };
  let sessionNumber: string;
  let secretsMethod: string;
  let hmacMethod: string;
  let configId: string;

  beforeAll(async () => {
    database = await createIsolatedDatabase('record_bodies');
    env = { ...queuedForwardEnv(), DATABASE_URL: database.url };
    psp = await startPsp();
    t = await startTestApp({ env });
    worker = await startWorker(env);
    const merchant = await createMerchantWithToken(t);
    token = merchant.token;
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: {
        display_name: 'PSP',
        hosts: [`127.0.0.1:${psp.port}`],
        response_rules: [
          { match: '$.card.number', action: 'mask' },
          { match: '$.card.cvv', action: 'remove' },
        ],
        record_bodies: true,
      },
    });
    expect(config.status).toBe(201);
    // Kept 7 days unless the config says otherwise.
    expect(config.body).toMatchObject({ record_bodies: true, record_bodies_retention_days: 7 });
    configId = config.body.id as string;
    const method = async (body: Record<string, unknown>) => {
      const created = await http(t.url, `/vault-forward/configs/${config.body.id}/authentications`, {
        method: 'POST',
        token,
        body,
      });
      expect(created.status).toBe(201);
      return created.body.id as string;
    };
    secretsMethod = await method({
      kind: 'template-secrets',
      label: 'psp key',
      fields: { name: 'psp_key', value: TEMPLATE_SECRET },
    });
    hmacMethod = await method({
      kind: 'hmac-signature',
      label: 'PSP signing',
      fields: { secret: HMAC_METHOD_SECRET, algorithm: 'sha256', encoding: 'hex', header: 'x-signature' },
    });
    card = await storeCard(t, merchant.id, {
      number: numberAvoidingShortValues('4', 16),
      expiration_date: '04/31',
      cardholder_name: HOLDER,
    });
    // The session's masked number (BIN and last four) must not hold the security code by chance.
    sessionNumber = numberAvoidingShortValues('4', 16);
  }, 90_000);

  afterAll(async () => {
    await stopQueuedSetup({ env, worker, t, downstream: psp });
    await database?.drop();
  }, 30_000);

  function forward(body: string, options: { queued?: boolean; path?: string; session?: string } = {}) {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        ...(options.queued ? { prefer: 'respond-async' } : {}),
        'x-vault-forward-url': `${psp.url}${options.path ?? '/pay'}`,
        'x-vault-forward-http-method': 'POST',
        ...(options.session
          ? { 'x-vault-forward-checkout-session': options.session }
          : { 'x-vault-forward-payment-methods': card.id }),
        'x-vault-forward-authentications': `${secretsMethod},${hmacMethod}`,
        'x-vault-forward-header-authorization': CALLER_BEARER,
        'x-vault-forward-header-x-card-ref': 'ref-{{ CARD_NUMBER_1 | last4 }}',
        'content-type': 'application/json',
      },
      rawBody: body,
    });
  }

  /** The record's id: the forward's request id, or the queued job's first attempt's. */
  async function recordId(result: HttpResult, queued: boolean): Promise<string> {
    if (!queued) return result.headers.get('x-vault-forward-request-id')!;
    expect(result.status).toBe(202);
    const job = await endedJob(t.url, token, result.body.id);
    expect(job.body.status).toBe('succeeded');
    return job.body.attempts[0].request_id as string;
  }

  /** The record through the API once its outcome (and bodies) are written, and its raw row. */
  async function record(id: string) {
    const read = await recordWithOutcome(t.url, token, id);
    const [row] = await t.db.query<Array<Record<string, unknown>>>(
      `SELECT ciphertext IS NOT NULL AND wrapped_key IS NOT NULL AND master_key_id IS NOT NULL AS sealed,
              request_body_truncated, response_body_truncated,
              -- filled_fields names the placeholders filled (the ledger's metadata, decision 0133) by design
              (row_to_json(r)::jsonb - 'filled_fields')::text AS whole
         FROM vault_forward_requests r WHERE id = $1`,
      [id],
    );
    return { api: read.body, text: read.text, row };
  }

  /**
   * Every value the fill put in, and what the methods computed from them. The short ones (security code,
   * expiry) only where ids, timestamps and durations cannot hold them by chance: in the bodies and headers.
   */
  function filledValues(short: boolean): string[] {
    const sent = psp.seen.map((s) => s.headers['x-signature']).filter((v): v is string => typeof v === 'string');
    return [
      card.number,
      sessionNumber,
      STRAY,
      TYPED,
      ...(short ? [SECURITY_CODE, '04/31', '0431', '05/32'] : []),
      HOLDER,
      TEMPLATE_SECRET,
      HMAC_METHOD_SECRET,
      CALLER_BEARER,
      'sk_live_caller',
      mac(TEMPLATE_SECRET, card.number),
      ...sent,
    ];
  }

  /**
   * `bodies`: the record's body and header fields; `texts`: whole answers, rows (whose sealed bytes, as hex, may
   * hold any short digit run by chance) and logs.
   */
  function expectNoFilledValue(bodies: unknown[], texts: string[]): void {
    for (const value of filledValues(true))
      for (const body of bodies) expect(JSON.stringify(body)).not.toContain(value);
    for (const value of filledValues(false)) for (const text of texts) expect(text).not.toContain(value);
  }
  const bodiesOf = (r: Record<string, unknown>) => [r.request_headers, r.request_body, r.response_body];

  it.each([
    ['synchronously', false],
    ['queued (what the worker sent)', true],
  ])(
    '%s: placeholder text where values went, secret headers redacted, the answer after the rules',
    async (_, queued) => {
      const result = await forward(BODY, { queued });
      if (!queued) expect(result.status).toBe(201);
      const id = await recordId(result, queued);
      // The downstream did get the filled values (else the test proves nothing).
      const got = psp.seen.at(-1)!;
      expect(got.body).toContain(card.number);
      expect(got.body).toContain(HOLDER);
      expect(got.body).toContain(mac(TEMPLATE_SECRET, card.number));
      expect(got.headers.authorization).toBe(CALLER_BEARER);

      const { api, text, row } = await record(id);
      expect(JSON.parse(api.request_body as string)).toEqual({
        pan: '{{ CARD_NUMBER_1 }}',
        exp: '{{ CARD_EXPIRATION_DATE_1 }}',
        mmyy: '{{ CARD_EXPIRATION_DATE_MM_1 }}{{ CARD_EXPIRATION_DATE_YY_1 }}',
        name: '{{ CARDHOLDER_NAME_1 }}',
        mac: '{{ CARD_NUMBER_1 | hmac_sha256(SECRET.psp_key) }}',
        last4: '{{ CARD_NUMBER_1 | last4 }}',
        // Typed by the caller, not filled: masked all the same (BIN and last four kept).
        typed: `${TYPED.slice(0, 6)}${'*'.repeat(5)}${TYPED.slice(-4)}`,
        // Escaped: sent as the literal text, and recorded so.
        literal: '{{ CARD_NUMBER_1 }}',
      });
      expect(api.request_headers).toEqual({
        // Passed through as the caller (fetch) sent them.
        accept: '*/*',
        'accept-language': '*',
        'content-type': 'application/json',
        authorization: '[Redacted]',
        // Not on the allow-list of headers kept in clear (decision 0113), templated or not.
        'x-card-ref': '[Redacted]',
        'x-signature': '[Redacted]',
      });
      // After the rules (number masked, security code removed), the stray number masked by the record.
      const answer = JSON.parse(api.response_body as string);
      expect(answer.card).toEqual({ number: expect.stringMatching(/^\d{6}\*+\d{4}$/) });
      expect(answer.note).toBe(`ref ${STRAY.slice(0, 6)}******${STRAY.slice(-4)}`);
      expect(api).toMatchObject({ request_body_truncated: false, response_body_truncated: false, status: 201 });
      // The record says it kept bodies, and until when: created_at plus the config's 7 days.
      expect(api.bodies_recorded).toBe(true);
      expect(Date.parse(api.bodies_kept_until as string) - Date.parse(api.created_at as string)).toBe(7 * DAY_MS);
      // Sealed at rest: not even the placeholder text is in the row.
      expect(row.sealed).toBe(true);
      expect(row.whole).not.toContain('CARD_NUMBER_1');
      expect(row.whole).not.toContain('Redacted');
      expectNoFilledValue(bodiesOf(api), [text, row.whole as string, t.logs.text, worker.output()]);
    },
  );

  it('a checkout session: its card, security code and expiry never reach the record', async () => {
    const session = await createCheckoutSession(t, token, {
      card: { number: sessionNumber, expiration_date: '05/32', security_code: SECURITY_CODE },
    });
    const result = await forward(SESSION_BODY, { session: session.id });
    expect(result.status).toBe(201);
    expect(psp.seen.at(-1)!.body).toContain(SECURITY_CODE);
    const { api, text, row } = await record(await recordId(result, false));
    expect(JSON.parse(api.request_body as string)).toEqual({
      pan: '{{ CARD_NUMBER_1 }}',
      // A security-code field's value is removed by its name, whatever it holds (decision 0113).
      cvv: '[Redacted]',
      exp: '{{ CARD_EXPIRATION_DATE_1 }}',
    });
    expect(JSON.parse(api.response_body as string).card).not.toHaveProperty('cvv');
    expect(row.sealed).toBe(true);
    expectNoFilledValue(bodiesOf(api), [text, row.whole as string, t.logs.text]);
  });

  it('an answer that echoes the request: the values the record withholds are withheld from it too', async () => {
    const result = await forward(BODY, { path: '/echo' });
    expect(result.status).toBe(200);
    // The caller gets the echo as it came (no rule covers it): the filled values are in it.
    expect(result.text).toContain(HOLDER);
    const { api, row } = await record(await recordId(result, false));
    const answer = JSON.parse(api.response_body as string);
    expect(answer.headers.authorization).toBe('[Redacted]');
    expect(answer.headers['x-signature']).toBe('[Redacted]');
    expect(answer.body).toContain('"name":"[Redacted]"');
    expect(answer.body).toContain('"mac":"[Redacted]"');
    // Values shorter than 8 characters are not looked for (they would match unrelated text): rules cover those.
    expectNoFilledValue([], [api.response_body, row.whole as string]);
  });

  it('caps each body at 64 KiB with a truncation flag; a streamed answer too', async () => {
    const big = `{"pan":"{{ CARD_NUMBER_1 }}","pad":"${'a'.repeat(100 * 1024)}"}`;
    const result = await forward(big, { path: '/big' });
    expect(result.status).toBe(200);
    expect(result.text.length).toBeGreaterThan(100 * 1024);
    const { api, row } = await record(await recordId(result, false));
    expect(api).toMatchObject({ request_body_truncated: true, response_body_truncated: true });
    expect(api.request_body).toHaveLength(64 * 1024);
    expect(api.request_body.startsWith('{"pan":"{{ CARD_NUMBER_1 }}","pad":"aaa')).toBe(true);
    expect(api.response_body).toHaveLength(64 * 1024);
    // The answer went to the caller as it came; its record masks the stray number.
    expect(result.text.startsWith(STRAY)).toBe(true);
    expect(api.response_body.startsWith(`${STRAY.slice(0, 6)}******${STRAY.slice(-4)} bbb`)).toBe(true);
    expect(row).toMatchObject({ request_body_truncated: true, response_body_truncated: true });
  });

  it('the list shows no bodies', async () => {
    const list = await http(t.url, '/vault-forward/requests?limit=5', { token });
    expect(list.status).toBe(200);
    for (const item of list.body.items) {
      expect(item).not.toHaveProperty('request_body');
      expect(item).not.toHaveProperty('response_body');
    }
  });

  it('the purge nulls the bodies past their own retention; the record stays, longer-kept bodies stay', async () => {
    const setRetention = async (days: number) =>
      expect(
        (
          await http(t.url, `/vault-forward/configs/${configId}`, {
            method: 'PUT',
            token,
            body: { record_bodies_retention_days: days },
          })
        ).body.record_bodies_retention_days,
      ).toBe(days);
    await setRetention(2);
    const old = await record(await recordId(await forward(BODY), false));
    // A record keeps the retention it was made with: the config's later change does not lengthen it.
    await setRetention(30);
    const fresh = await record(await recordId(await forward(BODY), false));
    expect(old.api.request_body).not.toBeNull();
    expect(old.api.bodies_kept_until).not.toBe(fresh.api.bodies_kept_until);
    const purge = t.get(ForwardRecordBodyPurge);
    const created = Date.parse(fresh.api.created_at as string);
    // A day on, nothing is past its retention; three days on, the old one's bodies go.
    expect(await purge.purgeExpired(new Date(created + DAY_MS))).toBe(0);
    expect(await purge.purgeExpired(new Date(created + 3 * DAY_MS))).toBeGreaterThanOrEqual(1);
    const [gone] = await t.db.query<Array<Record<string, unknown>>>(
      `SELECT status, ciphertext, wrapped_key, master_key_id, request_body_truncated, response_body_truncated
         FROM vault_forward_requests WHERE id = $1`,
      [old.api.id],
    );
    expect(gone).toEqual({
      status: 201,
      ciphertext: null,
      wrapped_key: null,
      master_key_id: null,
      request_body_truncated: false,
      response_body_truncated: false,
    });
    const read = await http(t.url, `/vault-forward/requests/${old.api.id}`, { token });
    expect(read.body).toMatchObject({
      status: 201,
      request_headers: null,
      request_body: null,
      response_body: null,
      // Recorded, and erased at the end of its retention.
      bodies_recorded: true,
      bodies_kept_until: old.api.bodies_kept_until,
    });
    expect((await http(t.url, `/vault-forward/requests/${fresh.api.id}`, { token })).body.request_body).toBe(
      fresh.api.request_body,
    );
    // Nothing else is past its retention then: a second run finds none.
    expect(await purge.purgeExpired(new Date(created + 3 * DAY_MS))).toBe(0);
    // 31 days on, the longest retention there is has passed: every body is gone.
    expect(await purge.purgeExpired(new Date(created + 31 * DAY_MS))).toBeGreaterThanOrEqual(1);
    expect((await http(t.url, `/vault-forward/requests/${fresh.api.id}`, { token })).body.request_body).toBeNull();
    const [left] = await t.db.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM vault_forward_requests WHERE wrapped_key IS NOT NULL`,
    );
    expect(left.n).toBe(0);
  });

  it('the config refuses a retention outside 1–30 days', async () => {
    for (const days of [0, 31, 1.5, '7']) {
      const refused = await http(t.url, `/vault-forward/configs/${configId}`, {
        method: 'PUT',
        token,
        body: { record_bodies_retention_days: days },
      });
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body)).toContain('record_bodies_retention_days');
    }
    const refused = await http(t.url, `/vault-forward/configs/${configId}`, {
      method: 'PUT',
      token,
      body: { record_bodies: 'yes' },
    });
    expect(refused.status).toBe(400);
  });

  /**
   * Decision 0138: with `record_bodies` off (the default), a forward sent now and a queued one keep no request
   * or answer body. The marker goes in the body and comes back in the echoed answer; the database's whole dump
   * holds no trace of it (nor of the sealed bodies), while the records with their outcomes are there.
   */
  it.each([
    ['synchronously', false],
    ['queued', true],
  ])('record_bodies off (the default), %s: no body kept, pg_dump holds no trace of it', async (_, queued) => {
    const merchant = await createMerchantWithToken(t);
    const created = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token: merchant.token,
      body: { display_name: 'PSP, no bodies', hosts: [`127.0.0.1:${psp.port}`] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ record_bodies: false, record_bodies_retention_days: 7 });
    const cardId = (await createCard(t, merchant.id)).id;
    const marker = `no-body-marker-${queued ? 'queued' : 'sync'}-${Math.random().toString(36).slice(2)}`;
    const result = await http(t.url, '/vault-forward', {
      method: 'POST',
      token: merchant.token,
      headers: {
        ...(queued ? { prefer: 'respond-async' } : {}),
        'x-vault-forward-url': `${psp.url}/echo`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': cardId,
        'content-type': 'application/json',
      },
      rawBody: `{"pan":"{{ CARD_NUMBER_1 }}","note":"${marker}"}`,
    });
    let id: string;
    if (queued) {
      expect(result.status).toBe(202);
      const job = await endedJob(t.url, merchant.token, result.body.id);
      expect(job.body.status).toBe('succeeded');
      id = job.body.attempts[0].request_id as string;
    } else {
      expect(result.status).toBe(200);
      // The caller gets the echo: the marker went to the target and came back.
      expect(result.text).toContain(marker);
      id = result.headers.get('x-vault-forward-request-id')!;
    }
    expect(psp.seen.at(-1)!.body).toContain(marker);
    const read = await waitFor(
      async () => {
        const r = await http(t.url, `/vault-forward/requests/${id}`, { token: merchant.token });
        return r.status === 200 && r.body.status !== null && r;
      },
      { what: 'the record with its outcome' },
    );
    expect(read.body).toMatchObject({
      status: 200,
      config_id: created.body.id,
      bodies_recorded: false,
      bodies_kept_until: null,
      request_headers: null,
      request_body: null,
      response_body: null,
    });
    const [row] = await t.db.query<Array<Record<string, unknown>>>(
      `SELECT ciphertext, wrapped_key, master_key_id, bodies_retention_days FROM vault_forward_requests WHERE id = $1`,
      [id],
    );
    expect(row).toEqual({ ciphertext: null, wrapped_key: null, master_key_id: null, bodies_retention_days: null });
    const dump = dataDump(database.url);
    // The record is in the dump; the marker sent and echoed is not.
    expect(dump).toContain(id);
    expect(dump).not.toContain(marker);
  });
});

describe('FORWARD_RECORD_BODY_RETENTION_DAYS=0: no bodies recorded, even for a config that asks', () => {
  let t: TestApp;
  let psp: Awaited<ReturnType<typeof startPsp>>;

  beforeAll(async () => {
    psp = await startPsp();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1', FORWARD_RECORD_BODY_RETENTION_DAYS: '0' } });
  });
  afterAll(async () => {
    await t?.close();
    await psp?.close();
  });

  it('the record has its outcome and null bodies', async () => {
    const { id: merchant, token } = await createMerchantWithToken(t);
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'PSP', hosts: [`127.0.0.1:${psp.port}`], record_bodies: true },
    });
    expect(config.status).toBe(201);
    // The config says what it asks for; the operator's ceiling decides.
    expect(config.body.record_bodies).toBe(true);
    const cardId = (await createCard(t, merchant)).id;
    const result = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${psp.url}/pay`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': cardId,
        'content-type': 'application/json',
      },
      rawBody: '{"pan":"{{ CARD_NUMBER_1 }}"}',
    });
    expect(result.status).toBe(201);
    const id = result.headers.get('x-vault-forward-request-id')!;
    const read = await waitFor(
      async () => {
        const r = await http(t.url, `/vault-forward/requests/${id}`, { token });
        return r.body.status !== null && r;
      },
      { what: 'the outcome' },
    );
    expect(read.body).toMatchObject({
      status: 201,
      bodies_recorded: false,
      bodies_kept_until: null,
      request_headers: null,
      request_body: null,
      response_body: null,
      request_body_truncated: false,
      response_body_truncated: false,
    });
  });
});
