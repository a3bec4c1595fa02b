import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { createApiKey } from '../factories/api-keys';
import { createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { checkedFetch } from '../support/checked-clients';
import { http } from '../support/http';
import { TcpProxy } from '../support/tcp-proxy';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';
import { testTempDir } from '../support/temp-data-dir';
import { allowHeavyDisclosure } from '../factories/disclosure-budgets';

/** No answer may take longer than this, outage or not: past it, the request is aborted and the test fails. */
const ANSWER_BOUND_MS = 8_000;

interface Answer {
  route: 'forward' | 'list';
  status: number;
  code?: string;
  retryAfter: string | null;
  problem: boolean;
  forwardId: string | null;
  phase: 'before' | 'down' | 'after';
}

/** The shared waitFor, with this file's longer default (outages and replays take seconds). */
const eventually = <T>(check: () => Promise<T>, timeoutMs = 20_000) => waitFor(check, { timeoutMs });

describe('PostgreSQL unreachable mid-load (behind a TCP proxy that is cut and restored)', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let direct: Client;
  let target: Downstream;
  let spoolDir: string;
  let merchant: string;
  let token: string;
  let cards: string[];

  beforeAll(async () => {
    direct = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await direct.connect();
    target = await startHttpDownstream();
    const viaProxy = new URL(process.env.TEST_DATABASE_URL!);
    proxy = await TcpProxy.start(viaProxy.hostname, Number(viaProxy.port || 5432));
    viaProxy.host = proxy.address;
    spoolDir = join(testTempDir('vf-fault-pg-'), 'spool');
    t = await startTestApp({
      env: {
        DATABASE_URL: viaProxy.toString(),
        FORWARD_INSECURE_HOSTS: '127.0.0.1',
        FORWARD_RECORD_SPOOL_DIR: spoolDir,
      },
    });
    merchant = (await createMerchantAccount(t)).id;
    await allowHeavyDisclosure(t.db, merchant);
    token = await (await createApiKey(t, merchant)).token();
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Fault target', hosts: [`127.0.0.1:${target.port}`], methods: ['POST'] },
    });
    expect(config.status).toBe(201);
    cards = await Promise.all([1, 2, 3, 4].map(async () => (await createCard(t, merchant)).id));
  });

  afterAll(async () => {
    await proxy.restore();
    await t.close();
    await proxy.close();
    await direct.end();
    await target.close();
  });

  async function call(
    route: Answer['route'],
    phase: Answer['phase'],
    card = cards[0],
    bearer = token,
  ): Promise<Answer> {
    const init: RequestInit =
      route === 'forward'
        ? {
            method: 'POST',
            headers: {
              authorization: `Bearer ${bearer}`,
              'x-vault-forward-url': `http://127.0.0.1:${target.port}/pay`,
              'x-vault-forward-http-method': 'POST',
              'x-vault-forward-payment-methods': card,
              'content-type': 'application/json',
            },
            body: JSON.stringify({ n: '{{ CARD_NUMBER_1 }}' }),
          }
        : { headers: { authorization: `Bearer ${bearer}` } };
    const response = await checkedFetch(t.url, route === 'forward' ? '/vault-forward' : '/buyers', {
      ...init,
      signal: AbortSignal.timeout(ANSWER_BOUND_MS),
    });
    const text = await response.text();
    const problem = (response.headers.get('content-type') ?? '').startsWith('application/problem+json');
    return {
      route,
      phase,
      status: response.status,
      code: problem ? JSON.parse(text).code : undefined,
      retryAfter: response.headers.get('retry-after'),
      problem,
      forwardId: response.headers.get('x-vault-forward-request-id'),
    };
  }

  function expectOnly200sAnd503s(answers: Answer[]) {
    const unexpected = answers.filter(
      (a) =>
        !(
          a.status === 200 ||
          (a.status === 503 && a.problem && a.code === 'service-unavailable' && /^\d+$/.test(a.retryAfter ?? ''))
        ),
    );
    expect(unexpected).toEqual([]);
  }

  async function expectRecorded(answers: Answer[]) {
    const ids = answers.filter((a) => a.route === 'forward' && a.status === 200).map((a) => a.forwardId!);
    expect(ids.length).toBeGreaterThan(0);
    await eventually(async () => {
      const { rows } = await direct.query<{ id: string }>(
        'SELECT id FROM vault_forward_requests WHERE id = ANY($1) AND status = 200',
        [ids],
      );
      return rows.length === ids.length;
    });
    await eventually(
      async () => !existsSync(spoolDir) || readdirSync(spoolDir).every((name) => !name.includes('.jsonl')),
    );
  }

  it('cut for ~3 s under load: no 500, 503s with Retry-After while down, recovers without restart, each 200 forward recorded', async () => {
    for (const card of cards) expect((await call('forward', 'before', card)).status).toBe(200); // warm caches
    const fresh = await (await createApiKey(t, merchant)).token(); // its key is not cached yet
    const answers: Answer[] = [];
    let phase: Answer['phase'] = 'before';
    let stop = false;
    const workers = Array.from({ length: 6 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const route = (i + w) % 3 === 0 ? 'list' : 'forward';
        answers.push(await call(route, phase, cards[(i + w) % cards.length]));
      }
    });
    await eventually(async () => answers.length >= 30);
    await proxy.cut();
    phase = 'down';
    const downSince = Date.now();
    const refusedAuth = await call('list', 'down', cards[0], fresh);
    const ready = await http(t.url, '/health/ready');
    const create = await http(t.url, '/buyers', { method: 'POST', token, body: { display_name: 'During outage' } });
    await eventually(async () => Date.now() - downSince > 3_000, 10_000);
    await proxy.restore();
    phase = 'after';
    await eventually(
      async () => answers.filter((a) => a.phase === 'after' && a.route === 'list' && a.status === 200).length >= 3,
    );
    stop = true;
    await Promise.all(workers);

    expect([refusedAuth.status, refusedAuth.code, refusedAuth.retryAfter]).toEqual([503, 'service-unavailable', '2']);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('2');
    expect([create.status, create.body.code]).toEqual([503, 'service-unavailable']);
    expectOnly200sAnd503s(answers);
    const down = answers.filter((a) => a.phase === 'down');
    expect(down.filter((a) => a.route === 'list' && a.status === 503).length).toBeGreaterThan(0);
    // Card forwards kept going on the spool while the lists, which need the table, were refused.
    expect(down.filter((a) => a.route === 'forward' && a.status === 200).length).toBeGreaterThan(0);
    await expectRecorded(answers);
  });

  it('black-holed (connections hang): answers within the bound, lists 503, forwards spooled and recorded afterwards', async () => {
    for (const card of cards) expect((await call('forward', 'before', card)).status).toBe(200);
    await proxy.blackhole();
    let answers: Answer[];
    try {
      answers = await Promise.all([
        call('list', 'down'),
        call('forward', 'down', cards[1]),
        call('forward', 'down', cards[2]),
        call('list', 'down'),
      ]);
    } finally {
      await proxy.restore();
    }
    expectOnly200sAnd503s(answers);
    expect(answers.filter((a) => a.route === 'list').map((a) => a.status)).toEqual([503, 503]);
    expect(answers.filter((a) => a.route === 'forward').map((a) => a.status)).toEqual([200, 200]);
    await expectRecorded(answers);
    expect((await call('list', 'after')).status).toBe(200);
  });

  it('a forward refused with 503 while PostgreSQL is cut is recorded as answered: 503 service-unavailable (issue 19)', async () => {
    // Never forwarded before, so its sealed row is not cached: the forward needs the table and is refused.
    const uncached = (await createCard(t, merchant)).id;
    expect((await call('forward', 'before', cards[0])).status).toBe(200); // the token and config are warm
    await proxy.cut();
    let answer: Response;
    try {
      answer = await checkedFetch(t.url, '/vault-forward', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'x-vault-forward-url': `http://127.0.0.1:${target.port}/pay`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': uncached,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ n: '{{ CARD_NUMBER_1 }}' }),
        signal: AbortSignal.timeout(ANSWER_BOUND_MS + 5_000),
      });
    } finally {
      await proxy.restore();
    }
    const problem = (await answer.json()) as { code: string };
    expect([answer.status, problem.code]).toEqual([503, 'service-unavailable']);
    const id = answer.headers.get('x-request-id')!;
    const row = await eventually(async () => {
      const { rows } = await direct.query<{ status: number; error_type: string }>(
        'SELECT status, error_type FROM vault_forward_requests WHERE id = $1 AND status IS NOT NULL',
        [id],
      );
      return rows[0];
    });
    expect(row).toEqual({ status: 503, error_type: 'service-unavailable' });
  });
});
