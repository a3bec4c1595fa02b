import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { DisclosureBudgetsService } from '../../src/modules/forwarding/budgets/disclosure-budgets.service';
import type { VaultForwardConfigsService } from '../../src/modules/forwarding-setup/configs/vault-forward-configs.service';
import type { MleAnswers } from '../../src/modules/forwarding/answers/mle-answers';
import type { ResponseFilter } from '../../src/modules/forwarding/answers/response-filter';
import type { ForwardRecordsService } from '../../src/modules/forwarding/records/forward-records.service';
import { ForwardExecutor } from '../../src/modules/forwarding/request/forward-executor';
import { ForwardPlanner } from '../../src/modules/forwarding/request/forward-planner';
import { ForwardingErrors } from '../../src/modules/forwarding/request/forwarding.errors';
import { ForwardingService } from '../../src/modules/forwarding/request/forwarding.service';
import type { PlaceholderSource, PlaceholderSources } from '../../src/modules/forwarding/request/placeholder-sources';
import type { AuthenticationSteps } from '../../src/modules/forwarding/sending/authentication-steps';
import type { DownstreamClient } from '../../src/modules/forwarding/sending/downstream-client';
import { DisclosureBudgetErrors } from '../../src/modules/forwarding/budgets/disclosure-budgets.errors';
import { ConfigError, loadConfig } from '../../src/platform/config/config';
import type { Metrics } from '../../src/platform/metrics/metrics.service';
import { ProblemException } from '../../src/platform/problem/problem';
import { SYSTEM_CLOCK } from '../../src/platform/time/clock';
import { paymentMethodsShape } from '../../src/modules/vault/placeholders/placeholders';
import { enabledConfig, FakeDownstream, FakeForwardRecords, ForwardEvent } from './fakes/forwarding-seams';

/**
 * Decision 0157: the waits before a card forward's send overlap. The budgets' count and the opening of the cards
 * run together (unless the cards' source reaches out for its values); the disclosure's commit follows both, and a
 * refusal by either sends nothing, the budget's first. MEASURE_WITHOUT, a benchmark's setting, is refused in
 * production. The planner and executor are the real ones, on in-memory seams that note when each step starts
 * and ends.
 */
describe('The waits before a forward sends (decision 0157)', () => {
  const CARD = '4111111111111111';
  let events: Array<ForwardEvent | { kind: string }>;
  let records: FakeForwardRecords;
  let downstream: FakeDownstream;
  /** The budgets' count: settled by the test, so it can be held open while the cards are opened. */
  let count: { resolve: () => void; reject: (error: unknown) => void };
  let valuesOnlyRead: boolean;
  let failFill: boolean;

  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(new Logger()));

  function service(env: Record<string, string> = {}): ForwardingService {
    const config = loadConfig(env);
    const configs = {
      enabledConfigs: () => Promise.resolve([enabledConfig('target.example', ['POST'])]),
    } as unknown as VaultForwardConfigsService;
    const source: PlaceholderSource = {
      shape: paymentMethodsShape(1),
      discloses: true,
      check: () => Promise.resolve(),
      fingerprints: () => Promise.resolve(['fingerprint-1']),
      values: (_merchant, uses) => {
        events.push({ kind: 'open' });
        if (failFill)
          return Promise.reject(new ProblemException(ForwardingErrors.invalidPlaceholder, 'Cannot be filled.'));
        return Promise.resolve(new Map(uses.map((use) => [use.token, CARD])));
      },
      valuesOnlyRead: () => valuesOnlyRead,
      answered: () => Promise.resolve(),
      abandoned: () => Promise.resolve(),
    };
    const sources = { for: () => source } as unknown as PlaceholderSources;
    const budgets = {
      checkPlaceholders: () => Promise.resolve(),
      prefetch: () => undefined,
      take: () => {
        events.push({ kind: 'count' });
        return new Promise<void>((resolve, reject) => {
          count = {
            resolve: () => {
              events.push({ kind: 'counted' });
              resolve();
            },
            reject,
          };
        });
      },
    } as unknown as DisclosureBudgetsService;
    const executor = new ForwardExecutor(
      sources,
      downstream as unknown as DownstreamClient,
      records as unknown as ForwardRecordsService,
      {} as ConstructorParameters<typeof ForwardExecutor>[3],
      configs,
      { answered: () => undefined } as unknown as AuthenticationSteps,
      { forwardFinished: () => undefined } as unknown as Metrics,
      { filter: (_m: string, _p: unknown, r: unknown) => Promise.resolve(r) } as ResponseFilter,
      { open: (_methods: unknown, r: unknown) => Promise.resolve(r) } as MleAnswers,
      budgets,
      config,
      SYSTEM_CLOCK,
    );
    const planner = new ForwardPlanner(
      configs,
      sources,
      {} as ConstructorParameters<typeof ForwardPlanner>[2],
      budgets,
      config,
    );
    return new ForwardingService(planner, executor);
  }

  beforeEach(() => {
    events = [];
    records = new FakeForwardRecords(events as ForwardEvent[]);
    downstream = new FakeDownstream(events as ForwardEvent[]);
    valuesOnlyRead = true;
    failFill = false;
  });

  function forward(forwarding: ForwardingService) {
    const headers = {
      'x-vault-forward-url': 'https://target.example/pay',
      'x-vault-forward-http-method': 'POST',
      'x-vault-forward-payment-methods': randomUUID(),
      'content-type': 'application/json',
    };
    return forwarding.forward({
      merchantAccountId: 'merchant-1',
      apiKeyId: null,
      requestId: randomUUID(),
      headers,
      rawHeaders: Object.entries(headers).flat(),
      body: Buffer.from('{"pan":"{{ CARD_NUMBER_1 }}"}'),
    });
  }

  /** Until `kind` has happened (the steps before it run on promises, not timers). */
  async function reached(kind: string): Promise<void> {
    for (let i = 0; i < 100 && !events.some((e) => e.kind === kind); i++) await Promise.resolve();
    expect(events.map((e) => e.kind)).toContain(kind);
  }

  const kinds = () => events.map((e) => e.kind);

  it('opens the cards while the budgets count, and commits the disclosure only once both are done', async () => {
    downstream.answer({ status: 200, headers: {}, body: Buffer.from('{}') });
    const result = forward(service());
    await reached('open');
    expect(kinds()).toEqual(['count', 'open']);
    count.resolve();
    expect((await result).status).toBe(200);
    expect(kinds()).toEqual(['count', 'open', 'counted', 'disclose', 'send', 'write']);
  });

  it('waits for the count before asking a source that reaches out for its values', async () => {
    valuesOnlyRead = false;
    downstream.answer({ status: 200, headers: {}, body: Buffer.from('{}') });
    const result = forward(service());
    await reached('count');
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(kinds()).toEqual(['count']);
    count.resolve();
    expect((await result).status).toBe(200);
    expect(kinds()).toEqual(['count', 'counted', 'open', 'disclose', 'send', 'write']);
  });

  it('refuses with the budget first when both the count and the fill refuse, and sends nothing', async () => {
    failFill = true;
    const result = forward(service());
    await reached('open');
    count.reject(new ProblemException(DisclosureBudgetErrors.exceeded, 'Over the budget.'));
    await expect(result).rejects.toMatchObject({ definition: DisclosureBudgetErrors.exceeded });
    expect(kinds()).toEqual(['count', 'open', 'write']);
    expect((events.at(-1) as { record: { status: number } }).record).toMatchObject({ status: 429 });
  });

  it('refuses a forward whose fill fails once counted, with nothing disclosed or sent', async () => {
    failFill = true;
    const result = forward(service());
    await reached('open');
    count.resolve();
    await expect(result).rejects.toMatchObject({ definition: ForwardingErrors.invalidPlaceholder });
    expect(kinds()).toEqual(['count', 'open', 'counted', 'write']);
  });

  it('MEASURE_WITHOUT leaves the count and the commit out for a benchmark, and is refused in production', async () => {
    downstream.answer({ status: 200, headers: {}, body: Buffer.from('{}') });
    expect((await forward(service({ MEASURE_WITHOUT: 'budgets, durable-record' }))).status).toBe(200);
    expect(kinds()).toEqual(['open', 'send', 'write']);
    // The outcome carries the disclosure (as a spooled one's does): its ledger entry and the card's use are written.
    expect((events.at(-1) as { record: { disclosed: boolean } }).record.disclosed).toBe(true);
    expect(() => loadConfig({ MEASURE_WITHOUT: 'budgets', NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadConfig({ MEASURE_WITHOUT: 'ledger' })).toThrow(/"ledger" is not one of durable-record, budgets/);
    expect(loadConfig({}).measureWithout.size).toBe(0);
  });
});
