import { cardNumber } from '../factories/cards';
import { createCheckoutSession } from '../factories/checkout-sessions';
import { createMerchantWithConfig } from '../factories/forwarding-merchants';
import { SECURITY_CODE_SPELLINGS } from '../support/card-spellings';
import { EchoDownstream, ECHO_TYPES, startEcho } from '../support/echo-downstream';
import {
  endedJob,
  queuedForwardEnv,
  recordWithOutcome,
  startWorker,
  stopQueuedSetup,
  WorkerProcess,
} from '../support/forward-jobs';
import { expectProblem, http, HttpResult } from '../support/http';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { dataDump } from '../support/sink-texts';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Acceptance of withoutAuthenticationData (src/platform/card-data/authentication-data.ts) and of withheld filled
 * values: a security code under any common field name, in JSON, XML and form bodies, typed by the caller
 * or filled from a checkout session, synchronous or queued, echoed whole by the target, is in no raw row,
 * no record body, no stored job answer and no log line.
 */

/** Field names of JSON and XML bodies (XML: those that are element names). */
const FIELDS = [...SECURITY_CODE_SPELLINGS, 'card.cvv'];
const FORM_FIELDS = [...FIELDS, 'card[cvc]', 'payment[card][security_code]'];
/** Codes no id, timestamp or duration holds as a word of its own once UUIDs are taken out. */
const TYPED = '7373';
const FILLED = '7337';
const FORMATS = ['json', 'xml', 'form'] as const;
type Format = (typeof FORMATS)[number];

function bodyOf(format: Format, value: string): string {
  if (format === 'json') return `{${FIELDS.map((f) => `"${f}":"${value}"`).join(',')},"amount":1000}`;
  if (format === 'xml')
    return `<pay>${FIELDS.filter((f) => !f.includes('.'))
      .map((f) => `<${f}>${value}</${f}>`)
      .join('')}<amount>1000</amount></pay>`;
  return `${FORM_FIELDS.map((f) => `${encodeURIComponent(f)}=${value}`).join('&')}&amount=1000`;
}

const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
/** Whether `text` holds `code` as a word of its own (UUIDs, which may hold it as a group, taken out). */
const holds = (text: unknown, code: string) => new RegExp(`\\b${code}\\b`).test(String(text).replace(UUIDS, 'uuid'));

describe('Security codes reach no sink, typed or filled, under any field name', () => {
  let database: IsolatedDatabase;
  let env: Record<string, string>;
  let t: TestApp;
  let worker: WorkerProcess;
  let echo: EchoDownstream;
  let token: string;

  beforeAll(async () => {
    database = await createIsolatedDatabase('security_codes');
    env = { ...queuedForwardEnv('test-security-codes'), DATABASE_URL: database.url };
    echo = await startEcho();
    t = await startTestApp({ env });
    worker = await startWorker(env);
    // Its records keep their bodies (decision 0138), which are among the sinks read here.
    token = (await createMerchantWithConfig(t, echo.port, 'echo', undefined, { record_bodies: true })).token;
  }, 120_000);

  afterAll(async () => {
    await stopQueuedSetup({ env, worker, t, downstream: echo });
    await database?.drop();
  }, 60_000);

  function forward(format: Format, body: string, headers: Record<string, string> = {}): Promise<HttpResult> {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${echo.url}/${format}/pay`,
        'x-vault-forward-http-method': 'POST',
        'content-type': ECHO_TYPES[format],
        ...headers,
      },
      rawBody: body,
    });
  }

  async function record(id: string): Promise<Record<string, any>> {
    return (await recordWithOutcome(t.url, token, id)).body as Record<string, any>;
  }

  /** The record's bodies and, queued, the stored answer: `code` in none of them. */
  async function sent(format: Format, body: string, code: string, headers: Record<string, string>, queued: boolean) {
    const result = await forward(format, body, queued ? { ...headers, prefer: 'respond-async' } : headers);
    let id = result.headers.get('x-vault-forward-request-id');
    const kept: Array<[string, unknown]> = [];
    if (queued) {
      expect(result.status).toBe(202);
      const job = await endedJob(t.url, token, result.body.id as string);
      expect(job.body.status).toBe('succeeded');
      kept.push(['stored answer', job.body.response.body], ['job', job.text]);
      id = job.body.attempts[0].request_id as string;
    } else {
      expect(result.status).toBe(200);
    }
    // The target got the code under every field name and echoed it (else the test proves nothing).
    const got = echo.received.at(-1)!.body.toString('utf8');
    const names = format === 'form' ? FORM_FIELDS : format === 'xml' ? FIELDS.filter((f) => !f.includes('.')) : FIELDS;
    expect(got.split(code).length - 1).toBe(names.length);
    const r = await record(id!);
    kept.push(['request_body', r.request_body], ['response_body', r.response_body], ['record', JSON.stringify(r)]);
    expect(kept.filter(([, text]) => holds(text, code)).map(([where, text]) => `${where}: ${String(text)}`)).toEqual(
      [],
    );
    return r;
  }

  describe.each([
    ['synchronous', false],
    ['queued', true],
  ])('%s', (_, queued) => {
    it.each(FORMATS)('%s: a code the caller typed is removed from the record and the stored answer', async (format) => {
      const r = await sent(format, bodyOf(format, TYPED), TYPED, {}, queued);
      // Removed by name; the rest of the body stays.
      expect(String(r.request_body)).toContain('1000');
      expect(String(r.request_body)).toContain('[Redacted]');
    });

    it.each(FORMATS)(
      '%s: a checkout session’s code, filled, is withheld; the session’s second use is 410',
      async (format) => {
        const session = await createCheckoutSession(t, token, {
          card: { number: cardNumber('37', 15), expiration_date: '05/32', security_code: FILLED },
        });
        const headers = { 'x-vault-forward-checkout-session': session.id };
        const r = await sent(format, bodyOf(format, '{{ CARD_SECURITY_CODE_1 }}'), FILLED, headers, queued);
        // Under a security-code name even the placeholder text is removed.
        expect(String(r.request_body)).toContain('[Redacted]');
        expectProblem(
          await forward(format, bodyOf(format, '{{ CARD_SECURITY_CODE_1 }}'), headers),
          410,
          'checkout-session-security-code-erased',
        );
        // Gone from the session's row too (the code is erased after its first use).
        const [row] = await t.db.query<Array<{ whole: string }>>(
          `SELECT row_to_json(s)::text AS whole FROM checkout_sessions s WHERE id = $1`,
          [session.id],
        );
        expect(holds(row.whole, FILLED)).toBe(false);
      },
    );
  });

  // In a describe of its own: Jest runs a block's own tests before its nested blocks'.
  describe('afterwards', () => {
    it('no raw row and no log line holds either code', () => {
      const dump = dataDump(database.url);
      expect(dump).toContain('vault_forward_requests');
      for (const [where, text] of [
        ['pg_dump', dump],
        ['api log', t.logs.text],
        ['worker log', worker.output()],
      ])
        for (const code of [TYPED, FILLED])
          expect({ where, code, holds: holds(text, code) }).toMatchObject({ holds: false });
    });
  });
});
