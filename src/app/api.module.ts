import { SecureFieldsModule } from '../modules/payments/secure-fields/secure-fields.module';
import { DynamicModule, Module, ModuleMetadata } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AuthModule } from '../modules/merchants/auth/auth.module';
import { BuyersModule } from '../modules/payments/buyers/buyers.module';
import { PaginationModule } from '../platform/pagination/pagination.module';
import { ProblemValidationPipe } from '../platform/http/validation.pipe';
import { ProblemFilter } from '../platform/problem/problem.filter';
import { CoreModule, CoreOptions } from './core.module';
import { ErrorsModule } from './errors/errors.module';
import { ForwardAuthenticationsModule } from '../modules/forwarding-setup/authentication-methods/forward-authentications.module';
import { ForwardEntryModule } from '../modules/forwarding/entry/forward-entry.module';
import { ForwardRecordsModule } from '../modules/forwarding/records/forward-records.module';
import { LedgerModule } from '../modules/forwarding/ledger/ledger.module';
import { isForwardPath } from '../modules/forwarding/entry/forward-route';
import { HealthModule } from './health/health.module';
import { HomeModule } from './home/home.module';
import { QueueModule } from '../platform/job-queue/queue.module';
import { ForwardJobsWorkerModule } from '../modules/forwarding/jobs/forward-jobs.module';
import { VaultForwardConfigsModule } from '../modules/forwarding-setup/configs/vault-forward-configs.module';
import {
  VaultForwardDefinitionsCoreModule,
  VaultForwardDefinitionsModule,
} from '../modules/forwarding-setup/definitions/vault-forward-definitions.module';
import { MerchantAccountsModule } from '../modules/merchants/accounts/merchant-accounts.module';
import { CheckoutSessionsModule } from '../modules/payments/checkout-sessions/checkout-sessions.module';
import { PaymentMethodsModule } from '../modules/payments/payment-methods/payment-methods.module';
import { WebhookSecretsModule } from '../modules/merchants/webhook-secrets/webhook-secrets.module';
import { DisclosureBudgetsModule } from '../modules/forwarding/budgets/disclosure-budgets.module';
import { InboundModule } from '../modules/inbound/entry/inbound.module';

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
        SecureFieldsModule,
        BuyersModule,
        VaultForwardDefinitionsModule,
        VaultForwardConfigsModule.wiredWith([ForwardAuthenticationsModule, VaultForwardDefinitionsCoreModule]),
        ForwardAuthenticationsModule,
        // Before ForwardEntryModule: the records' routes keep their place in the OpenAPI document.
        ForwardRecordsModule,
        LedgerModule,
        ForwardEntryModule,
        WebhookSecretsModule,
        DisclosureBudgetsModule,
        InboundModule,
        HealthModule,
        ErrorsModule,
        HomeModule,
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
