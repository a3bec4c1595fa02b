import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ProblemException } from '../../../platform/problem/problem';
import { isUuid } from '../../../platform/http/uuid';
import { networkTokenAad } from '../../vault/payment-method-resolver.service';
import { SecretSealer } from '../../vault/secret-sealer';
import { CreateNetworkTokenDto, NetworkTokenRow } from './dto/network-token.dto';
import { NetworkTokensRepository } from './network-tokens.repository';
import { NetworkTokenErrors } from './payment-methods.errors';
import { PaymentMethodsService } from './payment-methods.service';

/** A card keeps few tokens (one per token requestor, at most); this bounds the list answer. */
export const NETWORK_TOKENS_MAX = 20;

/**
 * Network tokens of stored cards (docs/decisions/0085). The token is sealed like a card number, bound
 * to merchant, card and its own id; the API shows its last four digits only. The newest active token
 * of a card fills the CARD_NETWORK_TOKEN_* placeholders (PaymentMethodResolver).
 */
@Injectable()
export class NetworkTokensService {
  constructor(
    private readonly tokens: NetworkTokensRepository,
    private readonly sealer: SecretSealer,
    private readonly paymentMethods: PaymentMethodsService,
  ) {}

  async create(merchantAccountId: string, paymentMethodId: string, input: CreateNetworkTokenDto) {
    await this.paymentMethods.get(merchantAccountId, paymentMethodId);
    const id = randomUUID();
    const sealed = this.sealer.sealJson(networkTokenAad(merchantAccountId, paymentMethodId, id), { t: input.token });
    await this.tokens.insert({
      id,
      merchantAccountId,
      paymentMethodId,
      status: input.status ?? 'active',
      expirationDate: input.expiration_date,
      label: input.token.slice(-4),
      sealed,
    });
    return this.get(merchantAccountId, paymentMethodId, id);
  }

  async list(merchantAccountId: string, paymentMethodId: string): Promise<NetworkTokenRow[]> {
    await this.paymentMethods.get(merchantAccountId, paymentMethodId);
    return this.tokens.ofCard(merchantAccountId, paymentMethodId, NETWORK_TOKENS_MAX);
  }

  async get(merchantAccountId: string, paymentMethodId: string, id: string): Promise<NetworkTokenRow> {
    await this.paymentMethods.get(merchantAccountId, paymentMethodId);
    const row = isUuid(id) ? await this.tokens.find(merchantAccountId, paymentMethodId, id) : undefined;
    if (!row) throw notFound(id);
    return row;
  }

  /** The row goes, ciphertext and wrapped data key with it. */
  async delete(merchantAccountId: string, paymentMethodId: string, id: string): Promise<void> {
    await this.paymentMethods.get(merchantAccountId, paymentMethodId);
    const deleted = isUuid(id) && (await this.tokens.delete(merchantAccountId, paymentMethodId, id));
    if (!deleted) throw notFound(id);
  }
}

function notFound(id: string): ProblemException {
  return new ProblemException(
    NetworkTokenErrors.notFound,
    `No network token "${id.slice(0, 64)}" exists for this payment method.`,
    [{ location: 'path', name: 'network_token_id', message: 'not found' }],
  );
}
