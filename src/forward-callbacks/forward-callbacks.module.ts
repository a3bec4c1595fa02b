import { DynamicModule, Module, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { ForwardingCoreModule } from '../forwarding/forwarding-core.module';
import { VaultModule } from '../vault/vault.module';
import { WebhookSignerModule } from '../webhook-secrets/webhook-secrets.module';
import {
  CALLBACK_DELIVERY_LOOP,
  CALLBACK_JOB_SOURCE,
  CallbackDeliveries,
  CallbackJobSource,
} from './callback-deliveries';

export interface ForwardCallbacksOptions {
  /** Run the delivery loop in this process (the worker); the API only schedules. */
  deliver: boolean;
  /** The job store's CallbackJobSource, for schedule(jobId), with the modules it needs. */
  jobSource?: Type<CallbackJobSource>;
  imports?: ModuleMetadata['imports'];
}

/** Job-end callbacks (CallbackDeliveries), loadable by the API and the worker: no controller. */
@Module({})
export class ForwardCallbacksModule {
  static forRoot(options: ForwardCallbacksOptions): DynamicModule {
    const providers: Provider[] = [CallbackDeliveries, { provide: CALLBACK_DELIVERY_LOOP, useValue: options.deliver }];
    if (options.jobSource) providers.push({ provide: CALLBACK_JOB_SOURCE, useClass: options.jobSource });
    return {
      module: ForwardCallbacksModule,
      imports: [VaultModule, ForwardingCoreModule, WebhookSignerModule, ...(options.imports ?? [])],
      providers,
      exports: [CallbackDeliveries],
    };
  }
}
