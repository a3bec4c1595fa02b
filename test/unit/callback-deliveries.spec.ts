import { Logger } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { CallbackDeliveriesRepository } from '../../src/modules/forwarding/callbacks/callback-deliveries.repository';
import { loadConfig } from '../../src/platform/config/config';
import { CALLBACK_JOB_NAME } from '../../src/platform/job-queue/forward-queue';
import { CallbackDeliveries } from '../../src/modules/forwarding/callbacks/callback-deliveries';
import { WebhookSecretEvents } from '../../src/modules/merchants/webhook-secrets/webhook-secret-events';
import { FakeForwardQueue } from './fakes/forward-queue';
import { SYSTEM_CLOCK } from '../../src/platform/time/clock';

/** A delivery row as far as waking it goes: whose it is, its attempts so far, and whether it waits for a secret. */
interface Delivery {
  id: string;
  merchant: string;
  attempts: number;
  waitingForSecret: boolean;
}

/**
 * The creating transaction of a webhook secret, in memory: its one statement of the callbacks' part (the
 * waiting deliveries of the merchant made due, returned with their next attempt), noted so a test can
 * tell it ran in this transaction and not on a connection of its own.
 */
class FakeTransaction {
  readonly statements: unknown[][] = [];

  constructor(private readonly deliveries: Delivery[]) {}

  readonly manager = {
    query: (_sql: string, params: unknown[]): Promise<[Array<{ id: string; attempt: number }>, number]> => {
      this.statements.push(params);
      const woken = this.deliveries.filter((d) => d.merchant === params[0] && d.waitingForSecret);
      for (const delivery of woken) delivery.waitingForSecret = false;
      return Promise.resolve([woken.map((d) => ({ id: d.id, attempt: d.attempts + 1 })), woken.length]);
    },
  } as unknown as EntityManager;
}

/**
 * A job-end callback put off for want of its merchant's webhook secret waits, without a try, until a
 * secret is created: the creation (WebhookSecretEvents) makes it due in the creating transaction and
 * enqueues its attempt once that commits. Only the wake-up is unit-tested here; its SQL runs in the e2e tests.
 */
describe('CallbackDeliveries: a secret wakes the deliveries waiting for it', () => {
  let events: WebhookSecretEvents;
  let queue: FakeForwardQueue;
  let deliveries: Delivery[];

  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(new Logger()));

  beforeEach(() => {
    events = new WebhookSecretEvents();
    queue = new FakeForwardQueue();
    deliveries = [
      { id: 'waiting-a', merchant: 'merchant-a', attempts: 0, waitingForSecret: true },
      { id: 'also-waiting-a', merchant: 'merchant-a', attempts: 2, waitingForSecret: true },
      { id: 'waiting-b', merchant: 'merchant-b', attempts: 0, waitingForSecret: true },
    ];
    const unused = {} as never;
    // Listens from its construction, as a provider of the worker and API modules does.
    const rows = new CallbackDeliveriesRepository({} as DataSource);
    new CallbackDeliveries(rows, unused, unused, unused, loadConfig({}), SYSTEM_CLOCK, events, queue);
  });

  it("enqueues the merchant's waiting deliveries once the secret commits, and no one else's", async () => {
    const transaction = new FakeTransaction(deliveries);

    const afterCommit = await events.secretCreated(transaction.manager, 'merchant-a');
    // Made due within the creating transaction; nothing enqueued before it commits.
    expect(transaction.statements).toEqual([['merchant-a']]);
    expect(queue.enqueued).toEqual([]);

    await afterCommit();
    expect(queue.enqueued.map(({ jobId, name, attempt }) => ({ jobId, name, attempt }))).toEqual([
      { jobId: 'waiting-a', name: CALLBACK_JOB_NAME, attempt: 1 },
      { jobId: 'also-waiting-a', name: CALLBACK_JOB_NAME, attempt: 3 },
    ]);
    // A copy of its own: the try that put the delivery off may still hold the attempt's own job id.
    expect(queue.enqueued.every((job) => /^w[0-9a-f]{12}$/.test(job.copy ?? ''))).toBe(true);
    expect(deliveries.find((d) => d.id === 'waiting-b')?.waitingForSecret).toBe(true);
  });

  it('does not fail the creation of a secret while the queue is down (left to the housekeeping)', async () => {
    queue.down = true;
    const transaction = new FakeTransaction(deliveries);

    const afterCommit = await events.secretCreated(transaction.manager, 'merchant-a');
    await expect(afterCommit()).resolves.toBeUndefined();

    expect(queue.enqueued).toEqual([]);
    expect(deliveries.filter((d) => d.merchant === 'merchant-a').every((d) => !d.waitingForSecret)).toBe(true);
  });
});
