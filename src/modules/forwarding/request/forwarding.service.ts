import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import { ExecutedResponse, ForwardExecutor } from './forward-executor';
import type { ForwardPlan } from './forward-plan';
import { ForwardPlanInput, ForwardPlanner } from './forward-planner';
import type { ForwardRecord } from '../records/forward-record';
import type { InflightLease } from '../sending/inflight-bytes';

interface ForwardInput extends ForwardPlanInput {
  /** Counts the filled body among the bytes in flight (the handler's, which also counts the request body). */
  lease?: InflightLease;
}

/**
 * POST /vault-forward, synchronously: plan (read the forwarding headers, check the target, the
 * config, the methods, the placeholders and that the cards exist), then execute (fill from the
 * vault, apply the methods, send, record) in the same call. Card values exist only inside the
 * executor; nothing here logs a body or a header value.
 */
@Injectable()
export class ForwardingService {
  constructor(
    private readonly planner: ForwardPlanner,
    private readonly executor: ForwardExecutor,
  ) {}

  async forward(input: ForwardInput): Promise<ExecutedResponse> {
    const started = performance.now();
    const record: ForwardRecord = {
      id: input.requestId,
      merchantAccountId: input.merchantAccountId,
      apiKeyId: input.apiKeyId,
      configId: null,
      method: null,
      targetUrl: null,
      status: null,
      durationMs: 0,
      paymentMethodIds: [],
      checkoutSessionId: null,
      authenticationIds: [],
      errorType: null,
    };
    let plan: ForwardPlan;
    try {
      plan = await this.planner.plan(input, record);
    } catch (error) {
      this.executor.recordFailure(record, started, error);
      throw error;
    }
    return this.executor.execute(plan, { lease: input.lease, record, started });
  }
}
