import { createHash } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { createCard, storeCard } from '../factories/cards';
import { createMerchantWithToken } from '../factories/forwarding-merchants';
import { listenOnLoopback } from '../support/downstream';
import { endedJob, queuedForwardEnv, startWorker, stopQueuedSetup, WorkerProcess } from '../support/forward-jobs';
import { expectProblem, http, HttpResult } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

/** The name that breaks an unescaped XML or form body in every way it can (issue 23). */
const HOLDER = 'O\'Brien & <Sons> "=+%"';

const SOAP =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body>' +
  '<Pay><Card holder="{{ CARDHOLDER_NAME_1 }}" code=\'{{CARDHOLDER_NAME_1}}\'>' +
  '<Number>{{ CARD_NUMBER_1 }}</Number>' +
  '<Expiry>{{ CARD_EXPIRATION_DATE_MM_1 }}{{ CARD_EXPIRATION_DATE_YY_1 }}</Expiry>' +
  '<Date>{{ CARD_EXPIRATION_DATE_1 }}</Date><Name>{{ CARDHOLDER_NAME_1 }}</Name>' +
  '</Card></Pay></soap:Body></soap:Envelope>';

const FORM =
  'holder={{ CARDHOLDER_NAME_1 }}&pan={{ CARD_NUMBER_1 }}&exp={{ CARD_EXPIRATION_DATE_1 }}' +
  '&raw={{ CARD_EXPIRATION_DATE_1 | raw }}&note=a+b%26c';

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  htmlEntities: true,
});

/**
 * A SOAP endpoint and a form endpoint, as a PSP's would be: each parses what it receives with a real
 * parser (an XML parser; URLSearchParams) and answers what it read, or 400 when it cannot parse it.
 */
async function startParsingDownstream() {
  const raw: string[] = [];
  /** What the endpoint answered each time, as it sent it. */
  const answered: unknown[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      raw.push(body);
      const answer = (status: number, document: unknown) => {
        answered.push(document);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(document));
      };
      if (req.url === '/soap') {
        const valid = XMLValidator.validate(body);
        if (valid !== true) return answer(400, { error: valid.err.msg });
        const card = xml.parse(body)['soap:Envelope']['soap:Body'].Pay.Card;
        return answer(200, {
          holderAttribute: card['@holder'],
          codeAttribute: card['@code'],
          number: card.Number,
          expiry: card.Expiry,
          date: card.Date,
          name: card.Name,
        });
      }
      const form = new URLSearchParams(body);
      answer(200, { keys: [...form.keys()], ...Object.fromEntries(form) });
    });
  });
  return {
    ...(await listenOnLoopback(server)),
    raw,
    answered,
  };
}

describe('placeholder values are escaped for the content type the target gets (XML/SOAP and forms)', () => {
  const env = queuedForwardEnv();
  let t: TestApp;
  let worker: WorkerProcess;
  let downstream: Awaited<ReturnType<typeof startParsingDownstream>>;
  let token: string;
  let merchant: string;
  let card: { id: string; number: string };

  beforeAll(async () => {
    downstream = await startParsingDownstream();
    t = await startTestApp({ env });
    worker = await startWorker(env);
    ({ id: merchant, token } = await createMerchantWithToken(t));
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'SOAP and forms', hosts: [`127.0.0.1:${downstream.port}`] },
    });
    expect(config.status).toBe(201);
    card = await storeCard(t, merchant, { expiration_date: '04/31', cardholder_name: HOLDER });
  }, 90_000);

  afterAll(() => stopQueuedSetup({ env, worker, t, downstream: downstream }), 30_000);

  function forward(path: string, contentType: string, body: string, queued: boolean): Promise<HttpResult> {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        ...(queued ? { prefer: 'respond-async' } : {}),
        'x-vault-forward-url': `${downstream.url}${path}`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card.id,
        'content-type': contentType,
      },
      rawBody: body,
    });
  }

  /**
   * What the target answered: directly, or once the worker sent the queued job, as the target sent it; the
   * job's stored answer has the filled number withheld (decision 0113).
   */
  async function answer(result: HttpResult, queued: boolean): Promise<{ status: number; body: unknown }> {
    if (!queued) return { status: result.status, body: result.body };
    expect(result.status).toBe(202);
    const job = await endedJob(t.url, token, result.body.id);
    expect(job.body.response.body).not.toContain(card.number);
    return { status: job.body.response.status, body: downstream.answered.at(-1) };
  }

  describe.each([
    ['synchronously', false],
    ['queued (Prefer: respond-async, sent by a worker)', true],
  ])('%s', (_, queued) => {
    it.each(['application/soap+xml; charset=utf-8', 'text/xml'])(
      'a SOAP endpoint (%s) parses the exact name, number and expiry, as text and in both attribute quotings',
      async (contentType) => {
        const result = await answer(await forward('/soap', contentType, SOAP, queued), queued);
        expect(result).toEqual({
          status: 200,
          body: {
            holderAttribute: HOLDER,
            codeAttribute: HOLDER,
            number: card.number,
            expiry: '0431',
            date: '04/31',
            name: HOLDER,
          },
        });
        expect(downstream.raw.at(-1)).toContain('<Name>O&apos;Brien &amp; &lt;Sons&gt; &quot;=+%&quot;</Name>');
      },
    );

    it('a form endpoint parses the exact name, number and expiry; | raw sends a value unencoded', async () => {
      const result = await answer(await forward('/form', 'application/x-www-form-urlencoded', FORM, queued), queued);
      expect(result).toEqual({
        status: 200,
        body: {
          keys: ['holder', 'pan', 'exp', 'raw', 'note'],
          holder: HOLDER,
          pan: card.number,
          exp: '04/31',
          raw: '04/31',
          note: 'a b&c',
        },
      });
      expect(downstream.raw.at(-1)).toBe(
        `holder=O%27Brien+%26+%3CSons%3E+%22%3D%2B%25%22&pan=${card.number}&exp=04%2F31&raw=04/31&note=a+b%26c`,
      );
    });
  });

  it('the content type that decides is the one the target gets: x-vault-forward-header-content-type wins', async () => {
    const result = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${downstream.url}/form`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card.id,
        'content-type': 'application/json',
        'x-vault-forward-header-content-type': 'application/x-www-form-urlencoded; charset=utf-8',
      },
      rawBody: 'holder={{ CARDHOLDER_NAME_1 }}',
    });
    expect(result.body).toEqual({ keys: ['holder'], holder: HOLDER });
  });

  describe('functions and or (issue 23, item 4)', () => {
    const FUNCTIONS =
      'b64={{ CARD_NUMBER_1 | base64 }}&hex={{ CARD_NUMBER_1 | last4 | hex }}&bin={{ CARD_NUMBER_1 | bin }}' +
      '&last4={{ CARD_NUMBER_1 | last4 | pad_left(8, "*") }}&exp={{ CARD_EXPIRATION_DATE_1 | date("MMYY") }}' +
      '&yyyy_mm={{ CARD_EXPIRATION_DATE_1 | date("YYYY-MM") }}&sha={{ CARD_NUMBER_1 | sha256 }}' +
      '&holder={{ CARDHOLDER_NAME_1 or CARD_NUMBER_1 | pad_left(24, "&") }}';

    it.each([
      ['synchronously', false],
      ['queued', true],
    ])('fill a form %s, each result escaped for the form', async (_, queued) => {
      const result = await answer(
        await forward('/form', 'application/x-www-form-urlencoded', FUNCTIONS, queued),
        queued,
      );
      expect(result.status).toBe(200);
      expect(result.body).toEqual({
        keys: ['b64', 'hex', 'bin', 'last4', 'exp', 'yyyy_mm', 'sha', 'holder'],
        b64: Buffer.from(card.number).toString('base64'),
        hex: Buffer.from(card.number.slice(-4)).toString('hex'),
        bin: card.number.slice(0, 6),
        last4: `****${card.number.slice(-4)}`,
        exp: '0431',
        yyyy_mm: '2031-04',
        sha: createHash('sha256').update(card.number).digest('hex'),
        holder: `${'&'.repeat(24 - HOLDER.length)}${HOLDER}`,
      });
    });

    it('an {% if %} block keeps the branch its condition chose, in a real forward', async () => {
      const body =
        '{% if CARDHOLDER_NAME_1 %}holder={{ CARDHOLDER_NAME_1 }}{% else %}holder=none{% endif %}' +
        '&pan={% if CARDHOLDER_NAME_1 %}{{ CARD_NUMBER_1 | last4 }}{% endif %}';
      const result = await answer(await forward('/form', 'application/x-www-form-urlencoded', body, true), true);
      expect(result.body).toEqual({ keys: ['holder', 'pan'], holder: HOLDER, pan: card.number.slice(-4) });
    });

    it('many distinct long results → 413 without computing them all: the executor stops past the cap', async () => {
      // 200 CJK characters: 600 bytes, 2,400 after | hex | hex; 64 × 16 distinct expressions of ~50 bytes each
      // would fill to ~2.4 MB, and the executor stops computing once the distinct values pass the cap.
      const cjk = (await createCard(t, merchant, { cardholder_name: '山田太郎'.repeat(50) })).id;
      const pads = '*#@!$%+-0123456'.split('');
      const body = Array.from({ length: 64 }, (_, n) =>
        pads.map((c) => `{{CARDHOLDER_NAME_1|hex|hex|pad_left(${n + 1},"${c}")}}`).join(''),
      ).join('');
      const before = downstream.raw.length;
      const result = await http(t.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          'x-vault-forward-url': `${downstream.url}/form`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': cjk,
          'content-type': 'text/plain',
        },
        rawBody: body,
      });
      const problem = expectProblem(result, 413, 'filled-body-too-large');
      expect(problem.detail).toMatch(
        /^With its placeholders filled the body would be over \d+ bytes, more than the 2097152 bytes/,
      );
      expect(downstream.raw.length).toBe(before);
    });

    it('an unknown function → 400 naming it and its offset, nothing sent, no card value in the answer', async () => {
      const before = downstream.raw.length;
      const body = '<Card><Number>{{ CARD_NUMBER_1 | rot13 }}</Number></Card>';
      const result = await forward('/soap', 'text/xml', body, false);
      const problem = expectProblem(result, 400, 'invalid-placeholder');
      expect(problem.detail).toContain(`unknown function "rot13" at offset ${body.indexOf('rot13')}`);
      expect(problem.errors).toEqual([expect.objectContaining({ location: 'body', name: 'body' })]);
      expect(result.text).not.toContain(card.number);
      expect(result.text).not.toContain(HOLDER);
      expect(downstream.raw.length).toBe(before);
      // The same in a forwarded header, named as the caller wrote it; and a half-written expression.
      const header = await http(t.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          'x-vault-forward-url': `${downstream.url}/form`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': card.id,
          'x-vault-forward-header-x-card': '{{ CARD_NUMBER_1 | last4 | ',
        },
      });
      expect(expectProblem(header, 400, 'invalid-placeholder').errors).toEqual([
        expect.objectContaining({ location: 'header', name: 'x-vault-forward-header-x-card' }),
      ]);
      expect(header.body.detail).toContain('is not a complete placeholder');
      expect(downstream.raw.length).toBe(before);
    });
  });
});
