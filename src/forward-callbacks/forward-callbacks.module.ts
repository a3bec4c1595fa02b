import { DynamicModule, Module, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { ForwardingCoreModule } from '../forwarding/forwarding-core.module';
import { VaultModule } from '../vault/vault.module';
import { WebhookSignerModule } from '../webhook-secrets/webhook-secrets.module';
import { CALLBACK_JOB_SOURCE, CallbackDeliveries, CallbackJobSource } from './callback-deliveries';

export interface ForwardCallbacksOptions {
  /** The job store's CallbackJobSource, for schedule(jobId), with the modules it needs. */
  jobSource?: Type<CallbackJobSource>;
  imports?: ModuleMetadata['imports'];
}

/**
 * Job-end callbacks (CallbackDeliveries), loadable by the API and the worker: no controller. Their
 * attempts are jobs of the one job queue (the global QueueModule's ForwardQueue), run by the worker's
 * ForwardJobProcessor.
 */
@Module({})
export class ForwardCallbacksModule {
  static forRoot(options: ForwardCallbacksOptions): DynamicModule {
    const providers: Provider[] = [CallbackDeliveries];
    if (options.jobSource) providers.push({ provide: CALLBACK_JOB_SOURCE, useClass: options.jobSource });
    return {
      module: ForwardCallbacksModule,
      imports: [VaultModule, ForwardingCoreModule, WebhookSignerModule, ...(options.imports ?? [])],
      providers,
      exports: [CallbackDeliveries],
    };
  }
}
