import { createHmac, randomUUID } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { deserializePlan, serializePlan } from '../../src/modules/forwarding/request/forward-plan';
import { ForwardExecutor } from '../../src/modules/forwarding/request/forward-executor';
import { ForwardPlanner } from '../../src/modules/forwarding/request/forward-planner';
import { ProblemException } from '../../src/platform/problem/problem';
import { storeCard } from '../factories/cards';
import { createMerchantWithToken } from '../factories/forwarding-merchants';
import { listenOnLoopback } from '../support/downstream';
import { endedJob, queuedForwardEnv, startWorker, stopQueuedSetup, WorkerProcess } from '../support/forward-jobs';
import { expectProblem, http, HttpResult } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

/** Distinctive enough to be searched for in logs, answers and rows (decision 0102). */
const SECRET = 'tmpl-SECRET-7c41e9-do-not-leak ü';
const OTHER_SECRET = 'other-SECRET-2b8d55-do-not-leak';
const PLAN_SECRETS = ['plan-SECRET-a-91c0d3', 'plan-SECRET-b-5e7f12'];

/** The downstream's own HMAC, computed from the key it shares with the merchant (not our code). */
const mac = (key: string, value: string) => createHmac('sha256', Buffer.from(key, 'utf8')).update(value).digest('hex');

/**
 * A PSP that checks the HMAC of the card number it receives: it recomputes it with the key it shares and
 * answers whether the body's and the header's values match, and every header name it got.
 */
async function startVerifyingDownstream() {
  const seen: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ headers: req.headers, body });
      const sent = JSON.parse(body) as { pan: string; mac: string; mac64: string };
      const expected = mac(SECRET, sent.pan);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          body_mac_ok: sent.mac === expected,
          base64_ok: sent.mac64 === Buffer.from(expected).toString('base64'),
          header_mac_ok: req.headers['x-pan-mac'] === expected,
          header_names: Object.keys(req.headers).sort(),
        }),
      );
    });
  });
  return {
    ...(await listenOnLoopback(server)),
    seen,
  };
}

const BODY =
  '{"pan": "{{ CARD_NUMBER_1 }}", "mac": "{{ CARD_NUMBER_1 | hmac_sha256(SECRET.psp_key) }}", ' +
  '"mac64": "{{ CARD_NUMBER_1 | hmac_sha256(SECRET.psp_key) | base64 }}"}';

describe('hmac_sha256(SECRET.name) with a template-secrets authentication method (decision 0102)', () => {
  const env = queuedForwardEnv();
  let t: TestApp;
  let worker: WorkerProcess;
  let downstream: Awaited<ReturnType<typeof startVerifyingDownstream>>;
  let token: string;
  let merchant: string;
  let configId: string;
  let card: { id: string; number: string };
  let methodId: string;

  async function newConfig(as: string, port: number): Promise<string> {
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token: as,
      body: { display_name: 'HMAC of the PAN', hosts: [`127.0.0.1:${port}`] },
    });
    expect(config.status).toBe(201);
    return config.body.id as string;
  }

  async function newSecret(as: string, config: string, name: string, value: string): Promise<string> {
    const created = await http(t.url, `/vault-forward/configs/${config}/authentications`, {
      method: 'POST',
      token: as,
      body: { kind: 'template-secrets', label: `secret ${name}`, fields: { name, value } },
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  }

  beforeAll(async () => {
    downstream = await startVerifyingDownstream();
    t = await startTestApp({ env });
    worker = await startWorker(env);
    ({ id: merchant, token } = await createMerchantWithToken(t));
    configId = await newConfig(token, downstream.port);
    card = await storeCard(t, merchant, { expiration_date: '04/31' });
    methodId = await newSecret(token, configId, 'psp_key', SECRET);
  }, 90_000);

  afterAll(() => stopQueuedSetup({ env, worker, t, downstream: downstream }), 30_000);

  function forward(
    body: string,
    options: { queued?: boolean; authentications?: string[]; headers?: Record<string, string> } = {},
  ): Promise<HttpResult> {
    const authentications = options.authentications ?? [methodId];
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        ...(options.queued ? { prefer: 'respond-async' } : {}),
        'x-vault-forward-url': `${downstream.url}/pay`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card.id,
        ...(authentications.length > 0 ? { 'x-vault-forward-authentications': authentications.join(',') } : {}),
        'content-type': 'application/json',
        ...options.headers,
      },
      rawBody: body,
    });
  }

  async function answer(result: HttpResult, queued: boolean): Promise<{ status: number; body: any }> {
    if (!queued) return { status: result.status, body: result.body };
    expect(result.status).toBe(202);
    const job = await endedJob(t.url, token, result.body.id);
    return { status: job.body.response.status, body: JSON.parse(job.body.response.body) };
  }

  it('the method is stored with its name only: the value never comes back', async () => {
    const read = await http(t.url, `/vault-forward/configs/${configId}/authentications/${methodId}`, { token });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ kind: 'template-secrets', fields: { name: 'psp_key' } });
    expect(read.body.fields).not.toHaveProperty('value');
    expect(read.text).not.toContain(SECRET);
    // Ours only: no Gr4vy form to update it with.
    const gr4vy = await http(t.url, `/vault-forward/configs/${configId}/authentications/${methodId}`, {
      method: 'PUT',
      token,
      body: { display_name: 'renamed', fields: [{ key: 'value', value: OTHER_SECRET }] },
    });
    expect(expectProblem(gr4vy, 400, 'validation-failed').detail).toContain(
      'template-secrets method has no Gr4vy form',
    );
  });

  it.each([
    ['synchronously', false],
    ['queued (sent by a worker, the method read again at send time)', true],
  ])(
    '%s: the downstream recomputes the same HMAC for the body and a header; nothing else is added',
    async (_, queued) => {
      const result = await answer(
        await forward(BODY, {
          queued,
          headers: { 'x-vault-forward-header-x-pan-mac': '{{ CARD_NUMBER_1 | hmac_sha256(SECRET.psp_key) }}' },
        }),
        queued,
      );
      expect(result.status).toBe(200);
      expect(result.body).toMatchObject({ body_mac_ok: true, base64_ok: true, header_mac_ok: true });
      expect(downstream.seen.at(-1)!.body).toContain(`"mac": "${mac(SECRET, card.number)}"`);
      // Listing the method applies nothing: the same header names as a forward that lists no method.
      const plain = await forward(`{"pan": "{{ CARD_NUMBER_1 }}", "mac": "", "mac64": ""}`, {
        authentications: [],
        headers: { 'x-vault-forward-header-x-pan-mac': 'none' },
      });
      expect(plain.status).toBe(200);
      expect(result.body.header_names).toEqual(plain.body.header_names);
      for (const { headers, body } of downstream.seen) expect(JSON.stringify([headers, body])).not.toContain(SECRET);
    },
  );

  it.each([false, true])(
    'SECRET.name that no listed method holds → 400 naming the placeholder and its offset, nothing sent (queued: %s)',
    async (queued) => {
      const before = downstream.seen.length;
      const body = '{"pan": "{{ CARD_NUMBER_1 }}", "mac": "{{ CARD_NUMBER_1 | hmac_sha256(SECRET.missing) }}"}';
      for (const authentications of [[], [methodId]]) {
        const result = await forward(body, { queued, authentications });
        const problem = expectProblem(result, 400, 'invalid-placeholder');
        expect(problem.detail).toBe(
          `{{ CARD_NUMBER_1 | hmac_sha256(SECRET.missing) }}: SECRET.missing at offset ${body.indexOf('hmac_sha256')} ` +
            'is held by no template-secrets method listed in x-vault-forward-authentications',
        );
        expect(problem.errors).toEqual([expect.objectContaining({ location: 'body', name: 'body' })]);
        expect(result.text).not.toContain(card.number);
      }
      expect(downstream.seen.length).toBe(before);
    },
  );

  it('two listed methods holding the same name → 400 naming both; an hmac-signature secret is never read', async () => {
    const twin = await newSecret(token, configId, 'psp_key', OTHER_SECRET);
    const before = downstream.seen.length;
    const result = await forward(BODY, { authentications: [methodId, twin] });
    const problem = expectProblem(result, 400, 'invalid-placeholder');
    expect(problem.detail).toContain(`SECRET.psp_key at offset ${BODY.indexOf('hmac_sha256')}`);
    expect(problem.detail).toContain(`held by more than one listed method (${methodId}, ${twin})`);
    // SECRET.secret names the field of an hmac-signature method listed here: only template-secrets are read.
    const signing = await http(t.url, `/vault-forward/configs/${configId}/authentications`, {
      method: 'POST',
      token,
      body: {
        kind: 'hmac-signature',
        label: 'signer',
        fields: { secret: OTHER_SECRET, algorithm: 'sha256', encoding: 'hex', header: 'x-signature' },
      },
    });
    expect(signing.status).toBe(201);
    const other = await forward('{"mac": "{{ CARD_NUMBER_1 | hmac_sha256(SECRET.secret) }}"}', {
      authentications: [signing.body.id],
    });
    expect(expectProblem(other, 400, 'invalid-placeholder').detail).toContain('SECRET.secret at offset');
    expect(downstream.seen.length).toBe(before);
    expect(`${result.text}${other.text}`).not.toContain(OTHER_SECRET);
  });

  it("another merchant's method (and another config's) cannot be used: 422, nothing sent", async () => {
    const before = downstream.seen.length;
    const { token: otherToken } = await createMerchantWithToken(t);
    const theirs = await newSecret(otherToken, await newConfig(otherToken, downstream.port), 'psp_key', OTHER_SECRET);
    for (const queued of [false, true]) {
      const result = await forward(BODY, { queued, authentications: [theirs] });
      expectProblem(result, 422, 'authentication-method-not-usable');
      expect(result.text).toContain('is not an authentication method of this merchant account');
      expect(result.text).not.toContain(OTHER_SECRET);
    }
    const ownOtherConfig = await newSecret(token, await newConfig(token, 1), 'psp_key', OTHER_SECRET);
    const result = await forward(BODY, { authentications: [ownOtherConfig] });
    expectProblem(result, 422, 'authentication-method-not-usable');
    expect(downstream.seen.length).toBe(before);
  });

  it('a serialised plan holds the method id, never its secret; the secret is read again when the plan is sent', async () => {
    const [first, second] = PLAN_SECRETS;
    const id = await newSecret(token, configId, 'plan_key', first);
    const headers = {
      'x-vault-forward-url': `${downstream.url}/pay`,
      'x-vault-forward-http-method': 'POST',
      'x-vault-forward-payment-methods': card.id,
      'x-vault-forward-authentications': id,
      'content-type': 'application/json',
    };
    const body = '{"pan": "{{ CARD_NUMBER_1 }}", "mac": "{{ CARD_NUMBER_1 | hmac_sha256(SECRET.plan_key) }}"}';
    const plan = await t.get(ForwardPlanner).plan({
      merchantAccountId: merchant,
      apiKeyId: null,
      requestId: randomUUID(),
      headers,
      rawHeaders: Object.entries(headers).flat(),
      body: Buffer.from(body),
    });
    const stored = serializePlan(plan);
    expect(stored).toContain(id);
    expect(stored).not.toContain(first);
    expect(stored).not.toContain(Buffer.from(first).toString('base64').slice(0, 12));
    // The method changes after planning: the send uses the secret as it is then.
    const replaced = await http(t.url, `/vault-forward/configs/${configId}/authentications/${id}`, {
      method: 'PUT',
      token,
      body: { fields: { name: 'plan_key', value: second } },
    });
    expect(replaced.status).toBe(200);
    const response = await t.get(ForwardExecutor).execute(deserializePlan(Buffer.from(stored)));
    expect(response.status).toBe(200);
    expect(JSON.parse(downstream.seen.at(-1)!.body).mac).toBe(mac(second, card.number));
    // Deleted since: the plan is refused when sent, naming the method, and nothing goes out.
    expect(
      (await http(t.url, `/vault-forward/configs/${configId}/authentications/${id}`, { method: 'DELETE', token }))
        .status,
    ).toBe(204);
    const before = downstream.seen.length;
    const refused = await t
      .get(ForwardExecutor)
      .execute(deserializePlan(Buffer.from(stored)))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ProblemException);
    expect((refused as ProblemException).message).toContain(id);
    expect(downstream.seen.length).toBe(before);
  });

  it('no secret in the logs of the API or the worker, nor in any raw row of methods, records or jobs', async () => {
    const rows = JSON.stringify(
      await t.db.query(
        `SELECT row_to_json(m)::text AS r, encode(ciphertext, 'escape') AS c FROM vault_forward_authentications m
          UNION ALL SELECT row_to_json(r)::text, '' FROM vault_forward_requests r WHERE merchant_account_id = $1
          UNION ALL SELECT row_to_json(j)::text, '' FROM vault_forward_jobs j WHERE merchant_account_id = $1`,
        [merchant],
      ),
    );
    expect(rows).toContain('psp_key');
    expect(rows).toContain(card.id);
    for (const secret of [SECRET, OTHER_SECRET, ...PLAN_SECRETS, mac(SECRET, card.number)]) {
      expect(rows).not.toContain(secret);
      expect(t.logs.text).not.toContain(secret);
      expect(worker.output()).not.toContain(secret);
    }
    expect(t.logs.text.length).toBeGreaterThan(0);
    expect(worker.output().length).toBeGreaterThan(0);
  });
});
