import { cardNumber } from '../factories/cards';
import { createCheckoutSession } from '../factories/checkout-sessions';
import { createMerchantWithConfig } from '../factories/forwarding-merchants';
import {
  endedJob,
  queuedForwardEnv,
  recordWithOutcome,
  ScriptedDownstream,
  startScriptedDownstream,
  startWorker,
  stopQueuedSetup,
  WorkerProcess,
} from '../support/forward-jobs';
import { http, HttpResult } from '../support/http';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { dataDump } from '../support/sink-texts';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Acceptance of decision 0136: a target's answer holding security codes under the PSPs' own names, in the
 * shapes a name rule used to miss (an array and an object under a code's name, an escaped key, CDATA, a
 * nested element, a comment, a multipart part, a CSV column, a response header), keeps none of them in the
 * record or in the stored job answer; and a code the service filled, echoed under a name nobody knows
 * (`"zz"`), is withheld from both. Read through the API and in the raw database rows.
 */

/** Codes no id, timestamp or duration holds as a word of its own once UUIDs are taken out. */
const TYPED = '7373';
const FILLED = '7337';
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const holds = (text: unknown, code: string) => new RegExp(`\\b${code}\\b`).test(String(text).replace(UUIDS, 'uuid'));

/** Each answer's content type and body; every answer also carries `X-Card-CVV` and `Cvd-Value` headers. */
const ANSWERS: Record<string, { type: string; body: string }> = {
  json: {
    type: 'application/json',
    body: `{"card":{"cvv":["${TYPED}"],"cvNumber":{"value":"${TYPED}"},"ssl_cvv2cvc2":${TYPED},"c\\u0076v":"${TYPED}"},"amount":1000}`,
  },
  xml: {
    type: 'application/xml',
    body:
      `<r><cvv><![CDATA[${TYPED}]]></cvv><CardSecVal><value>${TYPED}</value></CardSecVal>` +
      `<cvd_value><!-- x -->${TYPED}</cvd_value><card cv2="${TYPED}"/><amount>1000</amount></r>`,
  },
  multipart: {
    type: 'multipart/form-data; boundary=b0undary',
    body:
      `--b0undary\r\nContent-Disposition: form-data; name="card_cvv2"\r\n\r\n${TYPED}\r\n` +
      `--b0undary\r\nContent-Disposition: form-data; name="amount"\r\n\r\n1000\r\n--b0undary--\r\n`,
  },
  csv: { type: 'text/csv', body: `id;"Card CVV";amount\r\n1;${TYPED};1000\r\n2;"${TYPED}";1000\r\n` },
};
const SHAPES = Object.keys(ANSWERS);

describe('Security codes in every shape of an answer reach no record and no stored job answer', () => {
  let database: IsolatedDatabase;
  let env: Record<string, string>;
  let t: TestApp;
  let worker: WorkerProcess;
  let target: ScriptedDownstream;
  let token: string;

  beforeAll(async () => {
    database = await createIsolatedDatabase('security_code_shapes');
    env = { ...queuedForwardEnv('test-security-code-shapes'), DATABASE_URL: database.url };
    target = await startScriptedDownstream();
    for (const shape of SHAPES)
      target.script(`/${shape}`, [
        {
          status: 200,
          headers: { 'content-type': ANSWERS[shape].type, 'x-card-cvv': TYPED, 'cvd-value': TYPED },
          body: ANSWERS[shape].body,
        },
      ]);
    target.script('/filled', [{ status: 200, body: `{"zz":"${FILLED}","amount":1000}` }]);
    t = await startTestApp({ env });
    worker = await startWorker(env);
    // Its records keep their bodies (decision 0138), which are among the sinks read here.
    token = (await createMerchantWithConfig(t, target.port, 'shapes', undefined, { record_bodies: true })).token;
  }, 120_000);

  afterAll(async () => {
    await stopQueuedSetup({ env, worker, t, downstream: target });
    await database?.drop();
  }, 60_000);

  function forward(path: string, body: string, headers: Record<string, string>): Promise<HttpResult> {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${target.url}${path}`,
        'x-vault-forward-http-method': 'POST',
        'content-type': 'application/json',
        ...headers,
      },
      rawBody: body,
    });
  }

  async function record(id: string): Promise<Record<string, any>> {
    return (await recordWithOutcome(t.url, token, id)).body as Record<string, any>;
  }

  /** The record and, queued, the stored answer (body and headers): where each holds `code`. */
  async function kept(path: string, body: string, code: string, headers: Record<string, string>, queued: boolean) {
    const result = await forward(path, body, queued ? { ...headers, prefer: 'respond-async' } : headers);
    let id = result.headers.get('x-vault-forward-request-id');
    const texts: Array<[string, unknown]> = [];
    if (queued) {
      expect(result.status).toBe(202);
      const job = await endedJob(t.url, token, result.body.id as string);
      expect(job.body.status).toBe('succeeded');
      texts.push(['stored answer', job.body.response.body], ['job', job.text]);
      id = job.body.attempts[0].request_id as string;
    } else {
      // The first caller gets the target's answer as it came (decision 0113): the test proves something.
      expect(result.status).toBe(200);
      expect(holds(result.text, code)).toBe(true);
    }
    const r = await record(id!);
    texts.push(['response_body', r.response_body], ['record', JSON.stringify(r)]);
    return { record: r, leaks: texts.filter(([, text]) => holds(text, code)).map(([where]) => where), texts };
  }

  describe.each([
    ['synchronous', false],
    ['queued', true],
  ])('%s', (_, queued) => {
    it.each(SHAPES)('%s: no code in the record or the stored answer; the rest kept', async (shape) => {
      const { record: r, leaks, texts } = await kept(`/${shape}`, '{"amount":1000}', TYPED, {}, queued);
      expect(leaks).toEqual([]);
      expect(String(r.response_body)).toContain('[Redacted]');
      expect(String(r.response_body)).toContain('1000');
      if (queued) {
        const job = JSON.parse(String(texts.find(([where]) => where === 'job')![1])) as Record<string, any>;
        // A header named as a code keeps nothing of its value.
        expect(job.response.headers).toMatchObject({ 'x-card-cvv': '[Redacted]', 'cvd-value': '[Redacted]' });
        if (shape === 'json') expect(() => JSON.parse(job.response.body as string)).not.toThrow();
      }
    });

    it('a filled code echoed under an unknown name is withheld', async () => {
      const session = await createCheckoutSession(t, token, {
        card: { number: cardNumber('37', 15), expiration_date: '05/32', security_code: FILLED },
      });
      const { record: r, leaks } = await kept(
        '/filled',
        '{"cvv":"{{ CARD_SECURITY_CODE_1 }}"}',
        FILLED,
        { 'x-vault-forward-checkout-session': session.id },
        queued,
      );
      expect(leaks).toEqual([]);
      expect(String(r.response_body)).toBe('{"zz":"[Redacted]","amount":1000}');
      // The target did get the code (else the test proves nothing).
      expect(target.requestsTo('/filled').at(-1)!.body.toString()).toContain(FILLED);
    });
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
