import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Sql } from '../../../platform/database/sql';
import { ProblemException } from '../../../platform/problem/problem';
import { isUuid } from '../../../platform/http/uuid';
import { networkTokenAad } from '../../vault/payment-method-resolver.service';
import { SecretSealer } from '../../vault/secret-sealer';
import { CreateNetworkTokenDto, NetworkTokenRow } from './dto/network-token.dto';
import { NetworkTokenErrors } from './payment-methods.errors';
import { PaymentMethodsService } from './payment-methods.service';

/** A card keeps few tokens (one per token requestor, at most); this bounds the list answer. */
export const NETWORK_TOKENS_MAX = 20;

const COLUMNS = `t.id, t.payment_method_id, t.status, t.expiration_date, t.label, pm.scheme, t.created_at, t.updated_at`;

/**
 * Network tokens of stored cards (docs/decisions/0085). The token is sealed like a card number, bound
 * to merchant, card and its own id; the API shows its last four digits only. The newest active token
 * of a card fills the CARD_NETWORK_TOKEN_* placeholders (PaymentMethodResolver).
 */
@Injectable()
export class NetworkTokensService {
  constructor(
    private readonly sql: Sql,
    private readonly sealer: SecretSealer,
    private readonly paymentMethods: PaymentMethodsService,
  ) {}

  async create(merchantAccountId: string, paymentMethodId: string, input: CreateNetworkTokenDto) {
    await this.paymentMethods.get(merchantAccountId, paymentMethodId);
    const id = randomUUID();
    const sealed = this.sealer.sealJson(networkTokenAad(merchantAccountId, paymentMethodId, id), { t: input.token });
    await this.sql.prepared(
      'network-tokens.insert',
      `INSERT INTO payment_method_network_tokens
         (id, merchant_account_id, payment_method_id, status, expiration_date, label, ciphertext, wrapped_key, master_key_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        id,
        merchantAccountId,
        paymentMethodId,
        input.status ?? 'active',
        input.expiration_date,
        input.token.slice(-4),
        sealed.ciphertext,
        sealed.wrappedKey,
        sealed.masterKeyId,
      ],
    );
    return this.get(merchantAccountId, paymentMethodId, id);
  }

  async list(merchantAccountId: string, paymentMethodId: string): Promise<NetworkTokenRow[]> {
    await this.paymentMethods.get(merchantAccountId, paymentMethodId);
    return this.sql.prepared<NetworkTokenRow & Record<string, unknown>>(
      'network-tokens.list',
      `SELECT ${COLUMNS} FROM payment_method_network_tokens t JOIN payment_methods pm ON pm.id = t.payment_method_id
       WHERE t.merchant_account_id = $1 AND t.payment_method_id = $2 ORDER BY t.created_at DESC, t.id LIMIT $3`,
      [merchantAccountId, paymentMethodId, NETWORK_TOKENS_MAX],
    );
  }

  async get(merchantAccountId: string, paymentMethodId: string, id: string): Promise<NetworkTokenRow> {
    await this.paymentMethods.get(merchantAccountId, paymentMethodId);
    const [row] = isUuid(id)
      ? await this.sql.prepared<NetworkTokenRow & Record<string, unknown>>(
          'network-tokens.get',
          `SELECT ${COLUMNS} FROM payment_method_network_tokens t JOIN payment_methods pm ON pm.id = t.payment_method_id
           WHERE t.merchant_account_id = $1 AND t.payment_method_id = $2 AND t.id = $3`,
          [merchantAccountId, paymentMethodId, id],
        )
      : [];
    if (!row) throw notFound(id);
    return row;
  }

  /** The row goes, ciphertext and wrapped data key with it. */
  async delete(merchantAccountId: string, paymentMethodId: string, id: string): Promise<void> {
    await this.paymentMethods.get(merchantAccountId, paymentMethodId);
    const deleted = isUuid(id)
      ? await this.sql.prepared(
          'network-tokens.delete',
          `DELETE FROM payment_method_network_tokens
           WHERE merchant_account_id = $1 AND payment_method_id = $2 AND id = $3 RETURNING id`,
          [merchantAccountId, paymentMethodId, id],
        )
      : [];
    if (deleted.length === 0) throw notFound(id);
  }
}

function notFound(id: string): ProblemException {
  return new ProblemException(
    NetworkTokenErrors.notFound,
    `No network token "${id.slice(0, 64)}" exists for this payment method.`,
    [{ location: 'path', name: 'network_token_id', message: 'not found' }],
  );
}
