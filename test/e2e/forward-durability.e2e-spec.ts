import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import { createApiKey } from '../factories/api-keys';
import { cardNumber, createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectProblem, http } from '../support/http';
import { TcpProxy } from '../support/tcp-proxy';
import { testTempDir } from '../support/temp-data-dir';
import { startTestApp, TestApp } from '../support/test-app';
import { Metrics } from '../../src/platform/metrics/metrics.service';
import { waitFor } from '../support/wait';

/** The shared waitFor, with this file's longer default (outages and replays take seconds). */
const eventually = <T>(check: () => Promise<T>, timeoutMs = 15_000) => waitFor(check, { timeoutMs });

/** A pid no process on this machine has, for a spool file "left by a crashed process". */
function deadPid(): number {
  for (let pid = 32_000; pid > 1_000; pid--) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
  throw new Error('no free pid');
}

describe('Forward records are durable before card data leaves (PostgreSQL behind a cuttable proxy)', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let direct: Client;
  let spoolDir: string;
  let merchant: string;
  let token: string;
  let configId: string;
  let downstream: Server;
  let downstreamUrl: string;
  /** What the downstream saw: for each request, the card's records as PostgreSQL held them at that moment. */
  const arrivals: Array<{ card: string; rowsAtArrival: Array<{ id: string; status: number | null }> }> = [];

  const rowsOf = async (card: string) =>
    (
      await direct.query<{ id: string; status: number | null; error_type: string | null }>(
        'SELECT id, status, error_type FROM vault_forward_requests WHERE $1 = ANY(payment_method_ids) ORDER BY created_at',
        [card],
      )
    ).rows;
  /** The app's unlabelled metrics, as Prometheus would scrape them. */
  const gauges = async () => {
    const { body } = await t.get(Metrics).scrape();
    return new Map(
      body
        .split('\n')
        .filter((line) => /^vault_forward_\w+ /.test(line))
        .map((line) => [line.split(' ')[0], Number(line.split(' ')[1])] as const),
    );
  };
  const spoolFiles = () =>
    existsSync(spoolDir) ? readdirSync(spoolDir).filter((name) => name.includes('.jsonl')) : [];

  beforeAll(async () => {
    direct = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await direct.connect();
    downstream = createServer((req, res) => {
      const card = String(req.headers['x-card'] ?? '');
      req.resume();
      req.on('end', () => {
        rowsOf(card)
          .then((rows) => arrivals.push({ card, rowsAtArrival: rows.map(({ id, status }) => ({ id, status })) }))
          .catch(() => arrivals.push({ card, rowsAtArrival: [] }))
          .finally(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
      });
    });
    await new Promise<void>((r) => downstream.listen(0, '127.0.0.1', () => r()));
    downstreamUrl = `http://127.0.0.1:${(downstream.address() as AddressInfo).port}`;

    proxy = await TcpProxy.start('127.0.0.1', 5432);
    const viaProxy = new URL(process.env.TEST_DATABASE_URL!);
    viaProxy.host = proxy.address;
    spoolDir = join(testTempDir('vf-spool-'), 'spool');
    t = await startTestApp({
      env: {
        DATABASE_URL: viaProxy.toString(),
        FORWARD_INSECURE_HOSTS: '127.0.0.1',
        FORWARD_RECORD_SPOOL_DIR: spoolDir,
      },
    });
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: {
        display_name: 'Durability downstream',
        hosts: [downstreamUrl.slice('http://'.length)],
        methods: ['POST'],
      },
    });
    expect(config.status).toBe(201);
    configId = config.body.id;
  });

  afterAll(async () => {
    await proxy.restore();
    await t.close();
    await proxy.close();
    await direct.end();
    await new Promise<void>((r) => downstream.close(() => r()));
  });

  function forwardCard(card: string) {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${downstreamUrl}/charge?ref=1`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card,
        'x-vault-forward-header-x-card': card,
        'content-type': 'application/json',
      },
      rawBody: JSON.stringify({ number: '{{ CARD_NUMBER_1 }}' }),
    });
  }

  it('commits the record before the downstream receives the card, then fills in the outcome', async () => {
    const card = (await createCard(t, merchant)).id;
    const result = await forwardCard(card);
    expect(result.status).toBe(200);
    const id = result.headers.get('x-vault-forward-request-id');
    const arrival = arrivals.find((a) => a.card === card);
    // At the moment the card data arrived, its disclosure was already in the table, without an outcome yet.
    expect(arrival?.rowsAtArrival).toEqual([{ id, status: null }]);
    await eventually(async () => (await rowsOf(card))[0]?.status === 200);
    expect(spoolFiles()).toEqual([]);
  });

  it('with PostgreSQL cut, answers 200 only once the record is spooled and fsynced; replays it when PostgreSQL is back', async () => {
    const number = cardNumber();
    const card = (await createCard(t, merchant, { number })).id;
    expect((await forwardCard(card)).status).toBe(200); // sealed card, config and token now cached
    await proxy.cut();
    try {
      const result = await forwardCard(card);
      expect(result.status).toBe(200);
      const id = result.headers.get('x-vault-forward-request-id')!;
      // The answer came after the spool write: the file already holds the disclosure as a JSON line.
      const files = spoolFiles();
      expect(files.length).toBeGreaterThan(0);
      const lines = files.flatMap((name) => readFileSync(join(spoolDir, name), 'utf8').split('\n').filter(Boolean));
      const entries = lines.map((line) => JSON.parse(line));
      expect(entries).toContainEqual(
        expect.objectContaining({
          kind: 'pending',
          record: expect.objectContaining({
            id,
            merchantAccountId: merchant,
            configId,
            status: null,
            paymentMethodIds: [card],
          }),
        }),
      );
      const target = entries.find((e) => e.record.id === id).record.targetUrl;
      expect(target).toBe(`${downstreamUrl}/charge`);
      expect(lines.join('\n')).not.toContain(number);
      // The outcome cannot reach the table either; it follows into the spool.
      await eventually(async () =>
        spoolFiles().some((name) => readFileSync(join(spoolDir, name), 'utf8').includes('"kind":"final"')),
      );
      expect((await rowsOf(card)).map((r) => r.id)).not.toContain(id);
      // What an operator's dashboard sees meanwhile.
      const metrics = await gauges();
      expect(metrics.get('vault_forward_forward_record_spool_bytes')).toBeGreaterThan(0);
      expect(metrics.get('vault_forward_forward_records_database_down')).toBe(1);
    } finally {
      await proxy.restore();
    }
    // Replayed in the background, without a restart: the row with its outcome, and no file left.
    const rows = await eventually(async () => {
      const found = await rowsOf(card);
      return found.length === 2 && found.every((r) => r.status === 200) && found;
    });
    expect(rows).toHaveLength(2);
    await eventually(async () => spoolFiles().length === 0);
    const metrics = await gauges();
    expect(metrics.get('vault_forward_forward_record_spool_bytes')).toBe(0);
    expect(metrics.get('vault_forward_forward_records_database_down')).toBe(0);
  });

  it('with PostgreSQL cut and the spool unwritable, answers 503 with Retry-After and sends nothing', async () => {
    const card = (await createCard(t, merchant)).id;
    expect((await forwardCard(card)).status).toBe(200);
    await eventually(async () => spoolFiles().length === 0);
    rmSync(spoolDir, { recursive: true, force: true });
    writeFileSync(spoolDir, 'not a directory'); // mkdir and open both fail now
    await proxy.cut();
    try {
      const before = arrivals.filter((a) => a.card === card).length;
      const result = await forwardCard(card);
      expectProblem(result, 503, 'service-unavailable');
      expect(result.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(result.headers.get('x-vault-forward-error')).toBe('true');
      expect(arrivals.filter((a) => a.card === card)).toHaveLength(before);
    } finally {
      rmSync(spoolDir, { force: true });
      mkdirSync(spoolDir);
      await proxy.restore();
    }
    // The refused forward is recorded too, once a place to write it exists again.
    await eventually(async () =>
      (await rowsOf(card)).some((r) => r.status === 503 && r.error_type === 'service-unavailable'),
    );
  });

  it('an outcome neither PostgreSQL nor the spool takes is kept and retried until one does, then recorded once', async () => {
    const card = (await createCard(t, merchant)).id;
    expect((await forwardCard(card)).status).toBe(200);
    await eventually(async () => spoolFiles().length === 0);
    // The refused disclosure's failure starts the episode; the outcome's retries add no line to it.
    const kept = () => t.logs.text.split('could not spool').length - 1;
    const keptBefore = kept();
    rmSync(spoolDir, { recursive: true, force: true });
    writeFileSync(spoolDir, 'not a directory');
    await proxy.cut();
    try {
      expectProblem(await forwardCard(card), 503, 'service-unavailable');
      // Logged once for the episode, however many times the outcome is tried again (every second) meanwhile.
      await eventually(async () => kept() === keptBefore + 1);
      expect(await rowsOf(card)).toHaveLength(1);
    } finally {
      rmSync(spoolDir, { force: true });
      mkdirSync(spoolDir);
      await proxy.restore();
    }
    // Held, not written once and dropped: it reaches the table once a place takes it again.
    const rows = await eventually(async () => {
      const found = await rowsOf(card);
      return found.some((r) => r.status === 503) && found;
    });
    expect(rows.filter((r) => r.status === 503 && r.error_type === 'service-unavailable')).toHaveLength(1);
    expect(kept()).toBe(keptBefore + 1);
    expect(t.logs.text).toContain('forward records are written again');
    await eventually(async () => spoolFiles().length === 0);
  });

  it('replays at start-up the spool a crashed process left behind, skipping a torn last line', async () => {
    const dir = testTempDir('vf-spool-left-');
    const [answered, unanswered] = [randomUUID(), randomUUID()];
    const card = randomUUID();
    const record = (id: string) => ({
      id,
      merchantAccountId: merchant,
      configId,
      method: 'POST',
      targetUrl: `${downstreamUrl}/charge`,
      status: null,
      durationMs: 0,
      paymentMethodIds: [card],
      authenticationIds: [],
      errorType: null,
    });
    const at = '2026-01-02T03:04:05.678Z';
    const file = join(dir, `${deadPid()}-0badc0de-1-1.open.jsonl`);
    writeFileSync(
      file,
      [
        { kind: 'pending', at, record: record(answered) },
        { kind: 'pending', at, record: record(unanswered) },
        { kind: 'final', at, record: { ...record(answered), status: 201, durationMs: 12.5 } },
      ]
        .map((e) => `${JSON.stringify(e)}\n`)
        .join('') + '{"kind":"pending","at":"2026-01-02T03:0',
    );
    const second = await startTestApp({ env: { FORWARD_RECORD_SPOOL_DIR: dir } });
    try {
      // The file goes only once all of it is committed (disclosures, then outcomes); then the rows are complete.
      await eventually(async () => readdirSync(dir).filter((name) => name.includes('.jsonl')).length === 0);
      const { rows } = await direct.query(
        'SELECT id, status, duration_ms, created_at FROM vault_forward_requests WHERE $1 = ANY(payment_method_ids)',
        [card],
      );
      expect(rows).toHaveLength(2);
      expect(rows.find((r) => r.id === answered)).toMatchObject({ status: 201, duration_ms: 12.5 });
      expect(rows.find((r) => r.id === unanswered)).toMatchObject({ status: null });
      // The disclosure keeps the time it was spooled, not the time it was replayed.
      expect(new Date(rows[0].created_at).toISOString()).toBe(at);
    } finally {
      await second.close();
    }
  });
});
