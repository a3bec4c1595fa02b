import { DynamicModule, Module, ModuleMetadata } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AuthModule } from './auth/auth.module';
import { BuyersModule } from './buyers/buyers.module';
import { PaginationModule } from './common/pagination/pagination.module';
import { ProblemValidationPipe } from './common/http/validation.pipe';
import { ProblemFilter } from './common/problem/problem.filter';
import { CoreModule, CoreOptions } from './core.module';
import { ErrorsModule } from './errors/errors.module';
import { ForwardAuthenticationsModule } from './forward-authentications/forward-authentications.module';
import { ForwardEntryModule } from './forward-entry/forward-entry.module';
import { ForwardRecordsModule } from './forward-records/forward-records.module';
import { isForwardPath } from './forward-entry/forward-route';
import { HealthModule } from './health/health.module';
import { QueueModule } from './job-queue/queue.module';
import { ForwardJobsWorkerModule } from './forward-jobs/forward-jobs.module';
import { VaultForwardConfigsModule } from './vault-forward-configs/vault-forward-configs.module';
import { VaultForwardDefinitionsModule } from './vault-forward-definitions/vault-forward-definitions.module';
import { MerchantAccountsModule } from './merchant-accounts/merchant-accounts.module';
import { CheckoutSessionsModule } from './checkout-sessions/checkout-sessions.module';
import { PaymentMethodsModule } from './payment-methods/payment-methods.module';
import { WebhookSecretsModule } from './webhook-secrets/webhook-secrets.module';

/** The HTTP API: the core plus every feature's controllers, the auth guard, the problem filter. */
@Module({})
export class ApiModule {
  static forRoot(options: Omit<CoreOptions, 'role'>, extraImports: ModuleMetadata['imports'] = []): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        CoreModule.forRoot({ ...options, role: 'api' }),
        QueueModule.forRoot({ config: options.config, databaseUrl: options.databaseUrl, role: 'api' }),
        AuthModule,
        PaginationModule,
        MerchantAccountsModule,
        // Before BuyersModule: GET /buyers/payment-methods must not be read as GET /buyers/:id.
        PaymentMethodsModule,
        CheckoutSessionsModule,
        BuyersModule,
        VaultForwardDefinitionsModule,
        VaultForwardConfigsModule.withAuthentications(ForwardAuthenticationsModule),
        ForwardAuthenticationsModule,
        // Before ForwardEntryModule: the records' routes keep their place in the OpenAPI document.
        ForwardRecordsModule,
        ForwardEntryModule,
        WebhookSecretsModule,
        HealthModule,
        ErrorsModule,
        // The embedded database is this process's alone, so no worker process can reach it: queued forwards
        // are processed here (development only; production runs `npm run worker` beside the API).
        ...(options.config.databaseUrl === null ? [ForwardJobsWorkerModule] : []),
        ...extraImports,
      ],
      providers: [
        { provide: APP_FILTER, useValue: new ProblemFilter(isForwardPath) },
        { provide: APP_PIPE, useClass: ProblemValidationPipe },
      ],
    };
  }
}
