import { Injectable } from '@nestjs/common';
import { ProblemException } from '../common/problem/problem';
import { Sql } from '../database/sql';
import { parseExpirationDate } from './card';
import { CardVault } from './card-vault.service';
import { PLACEHOLDER_NAMES, PlaceholderName } from './placeholders';
import { VaultErrors } from './vault.errors';
import { isUuid } from '../common/uuid';

export const PAYMENT_METHODS_HEADER = 'x-vault-forward-payment-methods';
const MAX_PAYMENT_METHODS = 100;

function headerProblem(detail: string, definition = VaultErrors.invalidPaymentMethodsHeader): ProblemException {
  return new ProblemException(definition, detail, [{ location: 'header', name: PAYMENT_METHODS_HEADER, message: detail }]);
}

/** "id1,id2" → ids in order; every malformed case is a 400 naming the header and the position. */
export function parsePaymentMethodIds(raw: string): string[] {
  const ids = raw.split(',').map((part) => part.trim());
  if (ids.length > MAX_PAYMENT_METHODS) throw headerProblem(`lists ${ids.length} payment methods; at most ${MAX_PAYMENT_METHODS} are allowed`);
  const seen = new Map<string, number>();
  ids.forEach((id, index) => {
    const position = index + 1;
    if (id === '') throw headerProblem(`position ${position} is empty (separate UUIDs with single commas)`);
    if (!isUuid(id)) throw headerProblem(`position ${position} is not a UUID`);
    const key = id.toLowerCase();
    const first = seen.get(key);
    if (first !== undefined) throw headerProblem(`position ${position} repeats position ${first}; list each payment method once`);
    seen.set(key, position);
  });
  return ids.map((id) => id.toLowerCase());
}

interface SealedRow {
  id: string;
  expiration_date: string;
  ciphertext: Buffer;
  wrapped_key: Buffer;
  master_key_id: string;
}

/**
 * Turns the payment methods a forward request names into placeholder values, with one query for all
 * of them. Values exist only in the returned map; callers must not log it.
 */
@Injectable()
export class PaymentMethodResolver {
  constructor(
    private readonly vault: CardVault,
    private readonly sql: Sql,
  ) {}

  /** Values keyed by placeholder token (CARD_NUMBER_1, …) for every position and every name. */
  async resolve(merchantAccountId: string, ids: string[]): Promise<Map<string, string>> {
    const values = new Map<string, string>();
    if (ids.length === 0) return values;
    const rows = await this.sql.prepared<SealedRow>(
      'vault.resolve-payment-methods',
      `SELECT id, expiration_date, ciphertext, wrapped_key, master_key_id
         FROM payment_methods WHERE merchant_account_id = $1 AND id = ANY($2::uuid[])`,
      [merchantAccountId, ids],
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    ids.forEach((id, index) => {
      const row = byId.get(id);
      if (!row) {
        throw headerProblem(
          `position ${index + 1} (${id}) is not a payment method of this merchant account`,
          VaultErrors.unknownPaymentMethod,
        );
      }
    });
    ids.forEach((id, index) => {
      const row = byId.get(id)!;
      const card = this.vault.open(merchantAccountId, id, {
        ciphertext: row.ciphertext,
        wrappedKey: row.wrapped_key,
        masterKeyId: row.master_key_id,
      });
      const expiry = parseExpirationDate(row.expiration_date)!;
      const mm = String(expiry.month).padStart(2, '0');
      const byName: Record<PlaceholderName, string> = {
        CARD_NUMBER: card.number,
        CARD_EXPIRATION_DATE: row.expiration_date,
        CARD_EXPIRATION_DATE_M: String(expiry.month),
        CARD_EXPIRATION_DATE_MM: mm,
        CARD_EXPIRATION_DATE_YY: String(expiry.year).slice(2),
        CARD_EXPIRATION_DATE_YYYY: String(expiry.year),
        CARDHOLDER_NAME: card.cardholderName ?? '',
      };
      for (const name of PLACEHOLDER_NAMES) values.set(`${name}_${index + 1}`, byName[name]);
    });
    return values;
  }
}
