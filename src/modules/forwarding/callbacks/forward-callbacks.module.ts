import { DynamicModule, Module, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { ForwardingCoreModule } from '../request/forwarding-core.module';
import { VaultCoreModule } from '../../vault/vault.module';
import { WebhookSignerCoreModule } from '../../merchants/webhook-secrets/webhook-secrets.module';
import { CALLBACK_JOB_SOURCE, CallbackDeliveries, CallbackJobSource } from './callback-deliveries';
import { CallbackDeliveryProcessor } from './callback-delivery.processor';
import { CALLBACK_QUEUE_STATES, CallbackDeliveriesRepository } from './callback-deliveries.repository';
import { QueueMetrics } from '../../../platform/metrics/queue-metrics';
import { DISCLOSURE_BUDGET_EVENTS } from '../budgets/disclosure-budgets.service';

interface ForwardCallbacksOptions {
  /** The job store's CallbackJobSource, for schedule(jobId), with the modules it needs. */
  jobSource?: Type<CallbackJobSource>;
  imports?: ModuleMetadata['imports'];
  /** The worker's side: the callbacks' queue's consumer (a WorkerHost). The API only enqueues. */
  consume?: boolean;
}

/**
 * Job-end callbacks (CallbackDeliveries), loadable by the API and the worker: no controller. Their
 * attempts are jobs of their own queue (the global QueueModule's CALLBACK_QUEUE), run by the worker's
 * CallbackDeliveryProcessor (`consume`).
 */
@Module({})
export class ForwardCallbacksModule {
  static forRoot(options: ForwardCallbacksOptions): DynamicModule {
    const providers: Provider[] = [
      CallbackDeliveries,
      CallbackDeliveriesRepository,
      // A disclosure budget's refusal is announced as a delivery of its own (decision 0134).
      { provide: DISCLOSURE_BUDGET_EVENTS, useExisting: CallbackDeliveries },
      // The deliveries' queue gauges, read at scrape time by QueueMetrics (decision 0150).
      {
        provide: Symbol('CALLBACK_QUEUE_GAUGES'),
        inject: [QueueMetrics, CallbackDeliveriesRepository],
        useFactory: (gauges: QueueMetrics, deliveries: CallbackDeliveriesRepository) =>
          gauges.watch('callback', CALLBACK_QUEUE_STATES, () => deliveries.queueStates()),
      },
    ];
    if (options.jobSource) providers.push({ provide: CALLBACK_JOB_SOURCE, useClass: options.jobSource });
    if (options.consume) providers.push(CallbackDeliveryProcessor);
    return {
      module: ForwardCallbacksModule,
      imports: [VaultCoreModule, ForwardingCoreModule, WebhookSignerCoreModule, ...(options.imports ?? [])],
      providers,
      exports: [CallbackDeliveries],
    };
  }
}
