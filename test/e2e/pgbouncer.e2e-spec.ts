import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/platform/config/config';
import { createDataSource } from '../../src/platform/database/data-source';
import { runMigrations } from '../../src/platform/database/migrate';
import { Sql } from '../../src/platform/database/sql';
import { cardNumber } from '../factories/cards';
import { createMerchantWithToken } from '../factories/forwarding-merchants';
import { asKept } from '../support/card-spellings';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { startWorker, stopQueuedSetup, WorkerProcess } from '../support/forward-jobs';
import { http } from '../support/http';
import { PrivatePgBouncer } from '../support/private-pgbouncer';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';
import { testPostgresAdminUrl, testRedisUrl } from '../support/test-services';

/**
 * The service behind PgBouncer in transaction mode (issue 25, decision 0108). The pgbouncer gives each
 * database and user ONE server connection (default_pool_size = 1), so every client of the API and the
 * worker takes turns on the same PostgreSQL session: anything that relied on a session outliving its
 * transaction (a named prepared statement, a session advisory lock, a session SET, a LISTEN) meets
 * another client's state, or loses its own, at once instead of now and then.
 */
const DIRECT_URL = () => process.env.TEST_DATABASE_URL!;
const ADMIN_URL = testPostgresAdminUrl();

let bouncer: PrivatePgBouncer;

beforeAll(async () => {
  bouncer = await PrivatePgBouncer.start({ poolMode: 'transaction', poolSize: 1 });
});

afterAll(async () => {
  await bouncer?.stop();
});

async function query<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('The session traps, each through a one-connection PgBouncer in transaction mode', () => {
  let db: DataSource;

  beforeAll(async () => {
    db = createDataSource({ url: bouncer.urlFor(DIRECT_URL()), poolSize: 4 });
    await db.initialize();
  });

  afterAll(async () => {
    await db?.destroy();
  });

  function sql(transactionPooling: boolean): Sql {
    const config = loadConfig({
      DATABASE_URL: DIRECT_URL(),
      REDIS_URL: testRedisUrl(),
      DATABASE_TRANSACTION_POOLING: String(transactionPooling),
    });
    return new Sql(db, config);
  }

  // Four pool clients in turn on one server connection: each prepares the statement "again" on it.
  const burst = (s: Sql, name: string) =>
    Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => s.prepared<{ n: number }>(name, 'SELECT $1::int AS n', [i])),
    );

  it('named prepared statements collide (the trap is real), unnamed ones (DATABASE_TRANSACTION_POOLING) do not', async () => {
    const name = `pgbouncer-trap-${randomUUID()}`;
    const named = await burst(sql(false), name);
    const failures = named.filter((r) => r.status === 'rejected').map((r) => String(r.reason));
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.join('\n')).toMatch(/prepared statement .* (already exists|does not exist)/);

    const unnamed = await burst(sql(true), name);
    expect(unnamed.map((r) => (r.status === 'fulfilled' ? r.value[0].n : String(r.reason)))).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7,
    ]);
  });

  it("sessions speak UTC through it; the setting is the client's own, another client keeps the server's", async () => {
    const [server] = await query<{ TimeZone: string }>(DIRECT_URL(), 'SHOW TimeZone');
    const ours = await Promise.all(
      Array.from({ length: 6 }, () => db.query<Array<{ TimeZone: string }>>('SHOW TimeZone')),
    );
    expect(ours.map(([row]) => row.TimeZone)).toEqual(Array(6).fill('UTC'));
    // pg's `options=-c TimeZone=UTC`, the start-up parameter this replaced, is refused by PgBouncer.
    await expect(
      query(bouncer.urlFor(DIRECT_URL()).concat('?options=-c%20TimeZone%3DUTC'), 'SELECT 1'),
    ).rejects.toThrow(/unsupported startup parameter: options/);
    const [theirs] = await query<{ TimeZone: string }>(bouncer.urlFor(DIRECT_URL()), 'SHOW TimeZone');
    expect(theirs.TimeZone).toBe(server.TimeZone);
  });

  it('two processes migrating a new database at once through it: one applies every migration, once; no lock is left', async () => {
    const name = `vault_forward_test_pgb_${Date.now()}_${randomBytes(3).toString('hex')}`;
    await query(ADMIN_URL, `CREATE DATABASE ${name}`);
    const direct = new URL(ADMIN_URL);
    direct.pathname = `/${name}`;
    const sources = [0, 1].map(() => createDataSource({ url: bouncer.urlFor(direct.toString()), poolSize: 2 }));
    try {
      await Promise.all(sources.map((s) => s.initialize()));
      // A session lock here would be re-entrant on the shared server connection: both would migrate at once.
      const applied = await Promise.all(sources.map((s) => runMigrations(s)));
      const counts = applied.map((a) => a.length).sort((a, b) => a - b);
      expect(counts[0]).toBe(0);
      expect(counts[1]).toBeGreaterThan(10);
      const [row] = await query<{ n: number }>(direct.toString(), 'SELECT count(*)::int AS n FROM schema_migrations');
      expect(row.n).toBe(counts[1]);
      const locks = await query<{ n: number }>(
        ADMIN_URL,
        `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
          WHERE l.locktype = 'advisory' AND d.datname = $1`,
        [name],
      );
      expect(locks[0].n).toBe(0);
    } finally {
      await Promise.all(sources.filter((s) => s.isInitialized).map((s) => s.destroy()));
      await query(ADMIN_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  }, 60_000);
});

/** One API and one worker process, both with DATABASE_URL at the pgbouncer, on a queue of this run's own. */
async function setUp(backend: 'redis' | 'postgres') {
  const env = {
    DATABASE_URL: bouncer.urlFor(DIRECT_URL()),
    DATABASE_TRANSACTION_POOLING: 'true',
    // BullMQ's PostgreSQL engine (LISTEN, session search_path) goes direct.
    DATABASE_DIRECT_URL: DIRECT_URL(),
    QUEUE_BACKEND: backend,
    FORWARD_QUEUE_NAME: `test-pgbouncer-${randomUUID()}`,
    FORWARD_INSECURE_HOSTS: '127.0.0.1',
  };
  const downstream = await startHttpDownstream();
  const t = await startTestApp({ env });
  let worker: WorkerProcess;
  try {
    worker = await startWorker(env);
  } catch (error) {
    await t.close();
    await downstream.close();
    throw error;
  }
  const { token } = await createMerchantWithToken(t);
  return { env, downstream, t, worker, token };
}

type Setup = Awaited<ReturnType<typeof setUp>>;

describe.each(['redis', 'postgres'] as const)(
  'The main flows through PgBouncer (transaction mode), queue on %s',
  (backend) => {
    let s: Setup;
    let downstream: Downstream;
    let t: TestApp;
    let token: string;
    let configId: string;
    let cardId: string;
    const cardNumberSent = cardNumber('4', 16);

    beforeAll(async () => {
      s = await setUp(backend);
      ({ downstream, t, token } = s);
    }, 120_000);

    afterAll(async () => stopQueuedSetup(s), 30_000);

    it('creates buyers and lists them page by page with cursors', async () => {
      const ext = `pgb-${randomUUID()}`;
      for (let i = 0; i < 5; i++) {
        const created = await http(t.url, '/buyers', {
          method: 'POST',
          token,
          body: { display_name: `Buyer ${i}`, external_identifier: `${ext}-${i}` },
        });
        expect(created.status).toBe(201);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const page = await http(t.url, `/buyers?limit=2${query}`, { token });
        expect(page.status).toBe(200);
        seen.push(...page.body.items.map((b: { external_identifier: string }) => b.external_identifier));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(seen.filter((e) => e.startsWith(ext)).sort()).toEqual([0, 1, 2, 3, 4].map((i) => `${ext}-${i}`));
    });

    it('creates and updates a forwarding config, stores a card', async () => {
      const config = await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'Through PgBouncer', hosts: [`127.0.0.1:${downstream.port}`, 'example.com'] },
      });
      expect(config.status).toBe(201);
      configId = config.body.id;
      const updated = await http(t.url, `/vault-forward/configs/${configId}`, {
        method: 'PUT',
        token,
        body: { display_name: 'Renamed behind PgBouncer' },
      });
      expect(updated.status).toBe(200);
      expect(updated.body.display_name).toBe('Renamed behind PgBouncer');
      const card = await http(t.url, '/payment-methods', {
        method: 'POST',
        token,
        body: { method: 'card', number: cardNumberSent, expiration_date: '12/30' },
      });
      expect(card.status).toBe(201);
      cardId = card.body.id;
    });

    const forward = (headers: Record<string, string> = {}, body = '{"n":"{{ CARD_NUMBER_1 }}"}') =>
      http(t.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          'x-vault-forward-url': `${downstream.url}/pay`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': cardId,
          'content-type': 'application/json',
          ...headers,
        },
        rawBody: body,
      });

    it('forwards synchronously, many at once, each recorded durably in PostgreSQL', async () => {
      const answers = await Promise.all(Array.from({ length: 12 }, () => forward()));
      expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
      const ids = answers.map((a) => a.headers.get('x-vault-forward-request-id')!);
      await waitFor(
        async () => {
          const rows = await query<{ id: string }>(
            DIRECT_URL(),
            'SELECT id FROM vault_forward_requests WHERE id = ANY($1) AND status = 200',
            [ids],
          );
          return rows.length === ids.length;
        },
        { timeoutMs: 10_000, what: 'every forward record to be committed' },
      );
    });

    it('replays an idempotent forward; the downstream is hit once', async () => {
      const key = `k-${randomUUID()}`;
      const body = `{"n":"{{ CARD_NUMBER_1 }}","ref":"${key}"}`;
      const first = await forward({ 'idempotency-key': key }, body);
      const second = await forward({ 'idempotency-key': key }, body);
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      // The replay is the first answer as a record keeps it (decision 0113): the echoed card number withheld.
      expect(second.text).toBe(asKept(first.text, cardNumberSent));
      expect(downstream.received.filter((r) => r.body.toString().includes(key))).toHaveLength(1);
    });

    it('queued forwards (Prefer: respond-async) all end succeeded, each sent once', async () => {
      const refs = Array.from({ length: 10 }, () => randomUUID());
      const accepted = await Promise.all(
        refs.map((ref) => forward({ prefer: 'respond-async' }, `{"n":"{{ CARD_NUMBER_1 }}","ref":"${ref}"}`)),
      );
      expect(accepted.map((a) => a.status)).toEqual(Array(10).fill(202));
      for (const job of accepted) {
        const ended = await waitFor(
          async () => {
            const got = await http(t.url, `/vault-forward/jobs/${job.body.id}`, { token });
            return ['succeeded', 'failed', 'cancelled'].includes(got.body.status) && got;
          },
          { timeoutMs: 30_000, what: `job ${job.body.id} to end` },
        );
        expect(ended.body.status).toBe('succeeded');
      }
      for (const ref of refs)
        expect(downstream.received.filter((r) => r.body.toString().includes(ref))).toHaveLength(1);
    }, 60_000);
  },
);
