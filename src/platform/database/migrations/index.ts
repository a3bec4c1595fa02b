import { NetworkTokens1763937200000 } from './1763937200000-NetworkTokens';
import { CheckoutSessionThreeDSecure1763940800000 } from './1763940800000-CheckoutSessionThreeDSecure';
import { TemplateSecrets1763944400000 } from './1763944400000-TemplateSecrets';
import { ForwardRecordBodies1763948000000 } from './1763948000000-ForwardRecordBodies';
import { ForwardAuthenticationSecretDetails1763948103000 } from './1763948103000-ForwardAuthenticationSecretDetails';
import { Foundation1763888400000 } from './1763888400000-Foundation';
import { Buyers1763892000000 } from './1763892000000-Buyers';
import { Vault1763895600000 } from './1763895600000-Vault';
import { Forwarding1763899200000 } from './1763899200000-Forwarding';
import { ForwardAuthentications1763902800000 } from './1763902800000-ForwardAuthentications';
import { WebhookSecrets1763906400000 } from './1763906400000-WebhookSecrets';
import { ForwardJobs1763910000000 } from './1763910000000-ForwardJobs';
import { IdempotencyKeys1763913600000 } from './1763913600000-IdempotencyKeys';
import { CallbackDeliveries1763913700000 } from './1763913700000-CallbackDeliveries';
import { CheckoutSessions1763917200000 } from './1763917200000-CheckoutSessions';
import { PaymentMethodUsage1763917300000 } from './1763917300000-PaymentMethodUsage';
import { ForwardJobQueuedIds1763951700000 } from './1763951700000-ForwardJobQueuedIds';
import { SigningAuthenticationKinds1763955300000 } from './1763955300000-SigningAuthenticationKinds';
import { OAuth2ClientCredentials1763955400000 } from './1763955400000-OAuth2ClientCredentials';
import { DisclosureLedger1763959000000 } from './1763959000000-DisclosureLedger';
import { DisclosureBudgets1763962500000 } from './1763962500000-DisclosureBudgets';
import { ConfigRecordBodies1763966000000 } from './1763966000000-ConfigRecordBodies';
import { HashedIdempotencyKeys1763966100000 } from './1763966100000-HashedIdempotencyKeys';
import { ForwardJobAnswerErasure1763966200000 } from './1763966200000-ForwardJobAnswerErasure';
import { SecureFieldsOrigins1763966300000 } from './1763966300000-SecureFieldsOrigins';
import { BudgetsCountCards1763966400000 } from './1763966400000-BudgetsCountCards';
import { LedgerCompleteness1763966500000 } from './1763966500000-LedgerCompleteness';
import { InboundRoutes1763967000000 } from './1763967000000-InboundRoutes';
import { InboundRouteHeadersAndBodies1763967200000 } from './1763967200000-InboundRouteHeadersAndBodies';
import { ForwardJobLeases1763920000000 } from './1763920000000-ForwardJobLeases';
import { ForwardJobCallbackUrls1763923600000 } from './1763923600000-ForwardJobCallbackUrls';
import { CheckoutSessionCodeClaims1763924000000 } from './1763924000000-CheckoutSessionCodeClaims';
import { ForwardRecordMerchantInitiated1763927600000 } from './1763927600000-ForwardRecordMerchantInitiated';
import { VaultForwardDefinitions1763930000000 } from './1763930000000-VaultForwardDefinitions';
import { VaultForwardResponseRules1763933600000 } from './1763933600000-VaultForwardResponseRules';

/** In order. Listed explicitly so the same set runs from ts (tests) and from dist/ (npm start). */
export const MIGRATIONS = [
  Foundation1763888400000,
  Buyers1763892000000,
  Vault1763895600000,
  Forwarding1763899200000,
  ForwardAuthentications1763902800000,
  WebhookSecrets1763906400000,
  ForwardJobs1763910000000,
  IdempotencyKeys1763913600000,
  CallbackDeliveries1763913700000,
  CheckoutSessions1763917200000,
  PaymentMethodUsage1763917300000,
  ForwardJobLeases1763920000000,
  ForwardJobCallbackUrls1763923600000,
  CheckoutSessionCodeClaims1763924000000,
  ForwardRecordMerchantInitiated1763927600000,
  VaultForwardDefinitions1763930000000,
  VaultForwardResponseRules1763933600000,
  NetworkTokens1763937200000,
  CheckoutSessionThreeDSecure1763940800000,
  TemplateSecrets1763944400000,
  ForwardRecordBodies1763948000000,
  ForwardAuthenticationSecretDetails1763948103000,
  ForwardJobQueuedIds1763951700000,
  SigningAuthenticationKinds1763955300000,
  OAuth2ClientCredentials1763955400000,
  DisclosureLedger1763959000000,
  DisclosureBudgets1763962500000,
  ConfigRecordBodies1763966000000,
  HashedIdempotencyKeys1763966100000,
  ForwardJobAnswerErasure1763966200000,
  SecureFieldsOrigins1763966300000,
  BudgetsCountCards1763966400000,
  LedgerCompleteness1763966500000,
  InboundRoutes1763967000000,
  InboundRouteHeadersAndBodies1763967200000,
];
