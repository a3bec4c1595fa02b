import { ApiKey } from '../auth/api-key.entity';
import { Buyer } from '../buyers/buyer.entity';
import { MerchantAccount } from '../merchant-accounts/merchant-account.entity';
import { ForwardAuthentication } from '../forward-authentications/forward-authentication.entity';
import { ForwardRecordEntity } from '../forwarding/forward-record.entity';
import { PaymentMethod } from '../payment-methods/payment-method.entity';
import { VaultForwardConfig } from '../vault-forward-configs/vault-forward-config.entity';
import { WebhookSecret } from '../webhook-secrets/webhook-secret.entity';
import { ForwardJob } from '../forward-jobs/forward-job.entity';
import { CheckoutSession } from '../checkout-sessions/checkout-session.entity';

/** Every entity, listed explicitly: no glob, so ts-jest, ts-node and dist/ all see the same set. */
export const ENTITIES = [
  MerchantAccount,
  ApiKey,
  Buyer,
  PaymentMethod,
  VaultForwardConfig,
  ForwardAuthentication,
  ForwardRecordEntity,
  WebhookSecret,
  ForwardJob,
  CheckoutSession,
];
