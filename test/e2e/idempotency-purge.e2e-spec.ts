import { randomUUID } from 'node:crypto';
import { IdempotencyService, PURGE_EVERY_MS } from '../../src/modules/forwarding/idempotency/idempotency.service';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { TcpProxy } from '../support/tcp-proxy';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * What IdempotencyService does in the background, with the database cut: the periodic purge of
 * expired keys (onModuleInit) runs every PURGE_EVERY_MS, and a pass that fails (the database away) is
 * logged, not thrown; a claim refused by an outage is released once the database is back (its
 * release held, platform/database/held-writes.ts). The purge timer is driven by Jest's fake
 * setInterval (only that: everything else, the database included, is real); the app reaches
 * PostgreSQL through a TCP proxy the test cuts. A file of its own: nestjs-pino sends the lines logged
 * outside a request to the first app's stream of the module registry (one per test file), so this app
 * must be the file's first to have its warning in its own log capture.
 */
describe('Idempotency-Key in the background: the purge timer, releases of refused claims', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let merchant: string;

  beforeAll(async () => {
    const database = new URL(process.env.TEST_DATABASE_URL!);
    proxy = await TcpProxy.start(database.hostname, Number(database.port || 5432));
    database.host = proxy.address;
    t = await startTestApp({ env: { DATABASE_URL: database.toString() } });
    merchant = (await createMerchantAccount(t)).id;
  });
  afterAll(async () => {
    await proxy?.restore();
    await t?.close();
    await proxy?.close();
  });

  /** Restarts the service's purge timer under a fake setInterval and lets one period pass. */
  function onePurgePeriod(): void {
    const idempotency = t.get(IdempotencyService);
    jest.useFakeTimers({
      doNotFake: [
        'Date',
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'requestAnimationFrame',
        'cancelAnimationFrame',
        'requestIdleCallback',
        'cancelIdleCallback',
        'setImmediate',
        'clearImmediate',
        'setTimeout',
        'clearTimeout',
      ],
    });
    try {
      idempotency.onModuleDestroy();
      idempotency.onModuleInit();
      jest.advanceTimersByTime(PURGE_EVERY_MS);
      idempotency.onModuleDestroy();
    } finally {
      jest.useRealTimers();
    }
    idempotency.onModuleInit();
  }

  it('deletes expired keys every period; a pass that fails is logged as a warning', async () => {
    const key = `k-${randomUUID()}`;
    await t.db.query(
      `INSERT INTO vault_forward_idempotency_keys (id, merchant_account_id, key, fingerprint, kind, expires_at)
       VALUES ($1, $2, $3, '\\x00', 'sync', now() - interval '1 second')`,
      [randomUUID(), merchant, key],
    );
    onePurgePeriod();
    await waitFor(
      async () => (await t.db.query(`SELECT 1 FROM vault_forward_idempotency_keys WHERE key = $1`, [key])).length === 0,
      { what: 'the expired key to be purged' },
    );

    await proxy.cut();
    onePurgePeriod();
    const warning = await waitFor(
      () => t.logs.lines.find((line) => line.context === 'Idempotency' && /purge/.test(String(line.msg))),
      { timeoutMs: 15_000, what: 'the purge failure to be logged' },
    );
    expect(warning).toMatchObject({ level: 40, msg: expect.stringMatching(/^purge of expired keys failed: \S/) });
    await proxy.restore();
  });

  it('a claim refused because the database is away is released once it is back; one refused for another reason is not', async () => {
    const idempotency = t.get(IdempotencyService);
    const released = () =>
      t.logs.lines.filter(
        (line) =>
          line.context === 'HeldWrites' &&
          line.msg === 'held writes taken by the database' &&
          line.what === 'Idempotency-Key releases of refused requests',
      );
    const before = released().length;
    // A real database error that is not an outage (no such merchant account: a foreign key): nothing to release.
    await expect(
      idempotency.claim(randomUUID(), `k-${randomUUID()}`, { headers: {}, body: Buffer.alloc(32) }, 'sync'),
    ).rejects.toThrow(/foreign key/);
    // A claim of this merchant before the cut: its key for hashing (CardVault.keyedHash) is cached and the
    // look for legacy rows done, so the claim under the cut fails at its INSERT, the step whose answer may be lost.
    const warm = await idempotency.claim(
      merchant,
      `k-${randomUUID()}`,
      { headers: {}, body: Buffer.alloc(32) },
      'sync',
    );
    if (warm.outcome === 'new') await warm.release();
    await proxy.cut();
    // The INSERT may have committed with its answer lost: the claim is released once the database answers.
    await expect(
      idempotency.claim(merchant, `k-${randomUUID()}`, { headers: {}, body: Buffer.alloc(32) }, 'sync'),
    ).rejects.toThrow();
    await proxy.restore();
    const line = await waitFor(() => released().at(before), {
      timeoutMs: 10_000,
      what: 'the refused claim to be released',
    });
    // Only the outage's claim was pending, not the foreign-key one.
    expect(line).toMatchObject({ count: 1 });
  });
});
