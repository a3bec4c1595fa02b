import type { DisclosureBudgetsService } from '../../src/modules/forwarding/budgets/disclosure-budgets.service';
import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { VaultForwardConfigsService } from '../../src/modules/forwarding-setup/configs/vault-forward-configs.service';
import type { MleAnswers } from '../../src/modules/forwarding/answers/mle-answers';
import type { ResponseFilter } from '../../src/modules/forwarding/answers/response-filter';
import type { ForwardRecordsService } from '../../src/modules/forwarding/records/forward-records.service';
import { ForwardExecutor } from '../../src/modules/forwarding/request/forward-executor';
import { ForwardPlanner } from '../../src/modules/forwarding/request/forward-planner';
import { ForwardingErrors } from '../../src/modules/forwarding/request/forwarding.errors';
import { ForwardingService } from '../../src/modules/forwarding/request/forwarding.service';
import type { PlaceholderSources } from '../../src/modules/forwarding/request/placeholder-sources';
import type { AuthenticationSteps } from '../../src/modules/forwarding/sending/authentication-steps';
import { DownstreamClient, DownstreamProblem } from '../../src/modules/forwarding/sending/downstream-client';
import { loadConfig } from '../../src/platform/config/config';
import type { Metrics } from '../../src/platform/metrics/metrics.service';
import { ProblemException } from '../../src/platform/problem/problem';
import { SYSTEM_CLOCK } from '../../src/platform/time/clock';
import {
  enabledConfig,
  FakeDownstream,
  FakeForwardRecords,
  FakePlaceholderSources,
  ForwardEvent,
} from './fakes/forwarding-seams';

/**
 * POST /vault-forward sent now (ForwardingService: the planner, then the executor), with the real
 * planner and executor on in-memory seams: the records' writer, the cards, the downstream and the
 * merchant's configs. What is checked is the order of what happens and what the record ends with.
 */
describe('ForwardingService (synchronous path)', () => {
  const MERCHANT = 'merchant-1';
  const CARD = '4111111111111111';
  const STORED = randomUUID();
  const UNKNOWN = randomUUID();
  let events: ForwardEvent[];
  let records: FakeForwardRecords;
  let downstream: FakeDownstream;
  let service: ForwardingService;

  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(new Logger()));

  beforeEach(() => {
    const config = loadConfig({});
    events = [];
    records = new FakeForwardRecords(events);
    downstream = new FakeDownstream(events);
    const configs = {
      enabledConfigs: () => Promise.resolve([enabledConfig('target.example', ['POST'])]),
    } as unknown as VaultForwardConfigsService;
    const sources = new FakePlaceholderSources(new Map([[STORED, CARD]])) as unknown as PlaceholderSources;
    // No authentication method is named: never asked.
    const authentications = {} as ConstructorParameters<typeof ForwardPlanner>[2];
    const passThrough = { filter: (_m: string, _p: unknown, r: unknown) => Promise.resolve(r) } as ResponseFilter;
    const mle = { open: (_methods: unknown, r: unknown) => Promise.resolve(r) } as MleAnswers;
    const steps = { answered: () => undefined } as unknown as AuthenticationSteps;
    const metrics = { forwardFinished: () => undefined } as unknown as Metrics;
    // No budget set: every placeholder allowed, every disclosure within the defaults.
    const budgets = {
      checkPlaceholders: () => Promise.resolve(),
      prefetch: () => undefined,
      take: () => Promise.resolve(),
    } as unknown as DisclosureBudgetsService;
    const executor = new ForwardExecutor(
      sources,
      downstream as unknown as DownstreamClient,
      records as unknown as ForwardRecordsService,
      authentications,
      configs,
      steps,
      metrics,
      passThrough,
      mle,
      budgets,
      config,
      SYSTEM_CLOCK,
    );
    service = new ForwardingService(new ForwardPlanner(configs, sources, authentications, budgets, config), executor);
  });

  /** A forward of the stored card's number to `url`. */
  function forward(url = 'https://target.example/pay', paymentMethods = STORED) {
    const headers = {
      'x-vault-forward-url': url,
      'x-vault-forward-http-method': 'POST',
      'x-vault-forward-payment-methods': paymentMethods,
      'content-type': 'application/json',
    };
    const requestId = randomUUID();
    const input = {
      merchantAccountId: MERCHANT,
      apiKeyId: null,
      requestId,
      headers,
      rawHeaders: Object.entries(headers).flat(),
      body: Buffer.from('{"pan":"{{ CARD_NUMBER_1 }}"}'),
    };
    return { requestId, result: service.forward(input) };
  }

  const kinds = () => events.map((event) => event.kind);
  const written = () => events.filter((e) => e.kind === 'write').map((e) => e.record);

  it('makes the record durable before the card is sent, and ends it with the answer', async () => {
    downstream.answer({ status: 201, headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') });
    const { requestId, result } = forward();

    expect((await result).status).toBe(201);
    expect(kinds()).toEqual(['disclose', 'send', 'write']);
    const [disclosed] = events;
    expect(disclosed.kind === 'disclose' && disclosed.record).toMatchObject({
      id: requestId,
      merchantAccountId: MERCHANT,
      configId: 'config-1',
      method: 'POST',
      paymentMethodIds: [STORED],
      status: null,
    });
    const sent = events[1];
    expect(sent.kind === 'send' && sent.request.body?.toString()).toBe(`{"pan":"${CARD}"}`);
    expect(written()).toEqual([expect.objectContaining({ id: requestId, status: 201, errorType: null })]);
  });

  it('sends nothing when the record cannot be made durable, and records the refusal', async () => {
    records.refuseDisclosures = true;
    const { requestId, result } = forward();

    await expect(result).rejects.toMatchObject({ status: 503 });
    expect(kinds()).toEqual(['write']);
    expect(written()).toEqual([
      expect.objectContaining({ id: requestId, status: 503, errorType: 'service-unavailable' }),
    ]);
  });

  it('leaves a refusal record and sends nothing when the planner refuses', async () => {
    const notEnabled = forward('https://elsewhere.example/pay');
    await expect(notEnabled.result).rejects.toMatchObject({ definition: ForwardingErrors.endpointNotEnabled });
    const unknownCard = forward('https://target.example/pay', UNKNOWN);
    await expect(unknownCard.result).rejects.toMatchObject({ definition: ForwardingErrors.unknownPaymentMethod });

    expect(kinds()).toEqual(['write', 'write']);
    expect(written()).toEqual([
      expect.objectContaining({
        id: notEnabled.requestId,
        status: 403,
        errorType: 'endpoint-not-enabled',
        method: 'POST',
        targetUrl: 'https://elsewhere.example/pay',
      }),
      expect.objectContaining({
        id: unknownCard.requestId,
        status: 400,
        errorType: 'unknown-payment-method',
        configId: 'config-1',
        paymentMethodIds: [UNKNOWN],
      }),
    ]);
  });

  it('ends the record with the failure when the target cannot be reached', async () => {
    downstream.answer({
      error: new DownstreamProblem(ForwardingErrors.downstreamUnreachable, 'Could not connect.', false),
    });
    const { requestId, result } = forward();

    await expect(result).rejects.toBeInstanceOf(ProblemException);
    expect(kinds()).toEqual(['disclose', 'send', 'write']);
    expect(written()).toEqual([
      expect.objectContaining({ id: requestId, status: 502, errorType: 'downstream-unreachable' }),
    ]);
  });
});
