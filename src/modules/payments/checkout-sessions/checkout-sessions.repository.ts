import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { SealedParts } from '../../vault/envelope';
import { CheckoutSession } from './checkout-session.entity';

/**
 * What erasing a session leaves: no secret, no card column, no metadata. One statement for the
 * purge, the read-time check and the routes alike.
 */
const ERASE_COLUMNS = `ciphertext = NULL, security_code_ciphertext = NULL, three_d_secure_ciphertext = NULL,
  wrapped_key = NULL, master_key_id = NULL, card_fingerprint = NULL,
  card_source = NULL, payment_method_id = NULL, scheme = NULL, label = NULL, expiration_date = NULL, metadata = NULL,
  security_code_claim = NULL, security_code_claimed_until = NULL, erased_at = now(), updated_at = now()`;

interface CardRow {
  expired: boolean;
  erased: boolean;
  card_source: 'card' | 'id' | null;
  payment_method_id: string | null;
  /** Null for a card collected before fingerprints were kept here (decision 0142). */
  card_fingerprint: string | null;
  expiration_date: string | null;
  ciphertext: Buffer | null;
  security_code_ciphertext: Buffer | null;
  three_d_secure_ciphertext: Buffer | null;
  security_code_erased: boolean;
  wrapped_key: Buffer | null;
  master_key_id: string | null;
  pm_expiration_date: string | null;
  pm_ciphertext: Buffer | null;
  pm_wrapped_key: Buffer | null;
  pm_master_key_id: string | null;
}

interface CollectedCard {
  source: string;
  paymentMethodId: string | null;
  fingerprint: string;
  scheme: string;
  label: string;
  expirationDate: string;
  /** The envelope's parts: the number (none for a stored card's) and the security code. */
  number: Buffer | null;
  securityCode: Buffer | null;
  sealed: Pick<SealedParts, 'wrappedKey' | 'masterKeyId'>;
}

/**
 * Every read and write of checkout_sessions. A session naming a stored card reads that card's row too (the
 * payment methods sit above the sessions, which they store cards from): read-only.
 */
@Injectable()
export class CheckoutSessionsRepository {
  constructor(@InjectRepository(CheckoutSession) private readonly sessions: Repository<CheckoutSession>) {}

  async insert(id: string, merchantAccountId: string, metadata: unknown, expiresInSeconds: number): Promise<void> {
    await this.sessions.query(
      `INSERT INTO checkout_sessions (id, merchant_account_id, metadata, expires_at) VALUES ($1, $2, $3, now() + ` +
        `make_interval(secs => $4))`,
      [id, merchantAccountId, metadata, expiresInSeconds],
    );
  }

  /** The session with whether it has expired, by the database's clock, in the same read. */
  async find(merchantAccountId: string, id: string): Promise<{ session: CheckoutSession; expired: boolean } | null> {
    const { entities, raw } = await this.sessions
      .createQueryBuilder('s')
      .addSelect('s.expires_at <= now()', 'expired')
      .where('s.merchant_account_id = :merchantAccountId AND s.id = :id', { merchantAccountId, id })
      .getRawAndEntities<{ expired: boolean }>();
    return entities[0] ? { session: entities[0], expired: raw[0].expired } : null;
  }

  /**
   * `metadata` when `setMetadata`, and the expiry `expiresInSeconds` from now (null: unchanged) but never past
   * `maxSeconds` after creation; false when the session had expired or was erased.
   */
  async update(
    merchantAccountId: string,
    id: string,
    change: { setMetadata: boolean; metadata: unknown; expiresInSeconds: number | null },
    maxSeconds: number,
  ): Promise<boolean> {
    const [rows] = await this.sessions.query<[unknown[], number]>(
      `UPDATE checkout_sessions SET
          metadata = CASE WHEN $3 THEN $4::jsonb ELSE metadata END,
          expires_at = CASE WHEN $5::int IS NULL THEN expires_at
                            ELSE LEAST(now() + make_interval(secs => $5::int), created_at + make_interval(secs => $6)) END,
          updated_at = now()
        WHERE merchant_account_id = $1 AND id = $2 AND expires_at > now() AND erased_at IS NULL RETURNING id`,
      [merchantAccountId, id, change.setMetadata, change.metadata, change.expiresInSeconds, maxSeconds],
    );
    return rows.length > 0;
  }

  /**
   * One more Secure Fields submission counted on the session, whoever it belongs to (the session id is the browser's
   * capability), atomically across processes: its merchant, the count including this one, and whether it is over.
   * Undefined when there is no such session.
   */
  async countSecureFieldsTry(
    id: string,
  ): Promise<{ merchant_account_id: string; tries: number; expired: boolean } | undefined> {
    const [rows] = await this.sessions.query<
      [Array<{ merchant_account_id: string; tries: number; expired: boolean }>, number]
    >(
      `UPDATE checkout_sessions SET secure_fields_tries = secure_fields_tries + 1 WHERE id = $1
        RETURNING merchant_account_id, secure_fields_tries AS tries, (expires_at <= now() OR erased_at IS NOT NULL) AS expired`,
      [id],
    );
    return rows[0];
  }

  /** Whether there was such a session. */
  async delete(merchantAccountId: string, id: string): Promise<boolean> {
    const result = await this.sessions.delete({ id, merchantAccountId });
    return !!result.affected;
  }

  /** The collected card replaces any before it (and its 3-D Secure values); false when expired or erased. */
  async setCard(merchantAccountId: string, id: string, card: CollectedCard): Promise<boolean> {
    const [rows] = await this.sessions.query<[unknown[], number]>(
      `UPDATE checkout_sessions SET card_source = $3, payment_method_id = $4, scheme = $5, label = $6, expiration_date = $7,
              ciphertext = $8, security_code_ciphertext = $9, wrapped_key = $10, master_key_id = $11, card_fingerprint = $12,
              three_d_secure_ciphertext = NULL,
              security_code_erased_at = NULL, updated_at = now()
        WHERE merchant_account_id = $1 AND id = $2 AND expires_at > now() AND erased_at IS NULL RETURNING id`,
      [
        merchantAccountId,
        id,
        card.source,
        card.paymentMethodId,
        card.scheme,
        card.label,
        card.expirationDate,
        card.number,
        card.securityCode,
        card.sealed.wrappedKey,
        card.sealed.masterKeyId,
        card.fingerprint,
      ],
    );
    return rows.length > 0;
  }

  async envelope(
    merchantAccountId: string,
    id: string,
  ): Promise<{ wrapped_key: Buffer | null; master_key_id: string | null } | undefined> {
    const [row] = await this.sessions.query<Array<{ wrapped_key: Buffer | null; master_key_id: string | null }>>(
      `SELECT wrapped_key, master_key_id FROM checkout_sessions WHERE merchant_account_id = $1 AND id = $2`,
      [merchantAccountId, id],
    );
    return row;
  }

  /** False when the envelope is no longer `wrappedKey` (a card collected, a rotation), or the session expired. */
  async setThreeDSecure(
    merchantAccountId: string,
    id: string,
    wrappedKey: Buffer,
    ciphertext: Buffer,
  ): Promise<boolean> {
    const [rows] = await this.sessions.query<[unknown[], number]>(
      `UPDATE checkout_sessions SET three_d_secure_ciphertext = $4, updated_at = now()
          WHERE merchant_account_id = $1 AND id = $2 AND wrapped_key = $3 AND expires_at > now() AND erased_at IS NULL
          RETURNING id`,
      [merchantAccountId, id, wrappedKey, ciphertext],
    );
    return rows.length > 0;
  }

  async storedCard(
    merchantAccountId: string,
    paymentMethodId: string,
  ): Promise<{ id: string; scheme: string; label: string; expiration_date: string; fingerprint: string } | undefined> {
    const [pm] = await this.sessions.query<
      Array<{ id: string; scheme: string; label: string; expiration_date: string; fingerprint: string }>
    >(
      `SELECT id, scheme, label, expiration_date, fingerprint FROM payment_methods WHERE id = $1 AND merchant_account_id = $2`,
      [paymentMethodId, merchantAccountId],
    );
    return pm;
  }

  /** The session's card row, with the stored card it names. */
  async cardRow(merchantAccountId: string, id: string): Promise<CardRow | undefined> {
    const rows = await this.sessions.query<CardRow[]>(
      `SELECT s.expires_at <= now() AS expired, s.erased_at IS NOT NULL AS erased, s.card_source, s.payment_method_id, s.expiration_date,
              s.card_fingerprint, s.ciphertext, s.security_code_ciphertext, s.three_d_secure_ciphertext,
              s.security_code_erased_at IS NOT NULL AS security_code_erased,
              s.wrapped_key, s.master_key_id, pm.expiration_date AS pm_expiration_date, pm.ciphertext AS pm_ciphertext,
              pm.wrapped_key AS pm_wrapped_key, pm.master_key_id AS pm_master_key_id
         FROM checkout_sessions s
         LEFT JOIN payment_methods pm ON pm.id = s.payment_method_id AND pm.merchant_account_id = s.merchant_account_id
        WHERE s.merchant_account_id = $1 AND s.id = $2`,
      [merchantAccountId, id],
    );
    return rows[0];
  }

  /** Nulls every secret and card column of one session not yet erased. */
  async erase(merchantAccountId: string, id: string): Promise<void> {
    await this.sessions.query(
      `UPDATE checkout_sessions SET ${ERASE_COLUMNS} WHERE merchant_account_id = $1 AND id = $2 AND erased_at IS NULL`,
      [merchantAccountId, id],
    );
  }

  /** Whether the code is now held by `token` for `leaseMs`: one statement, so concurrent claims have one winner. */
  async claimSecurityCode(merchantAccountId: string, id: string, token: string, leaseMs: number): Promise<boolean> {
    const [, claimed] = await this.sessions.query<[unknown, number]>(
      `UPDATE checkout_sessions
          SET security_code_claim = $3, security_code_claimed_until = now() + make_interval(secs => $4::float8 / 1000)
        WHERE merchant_account_id = $1 AND id = $2 AND security_code_ciphertext IS NOT NULL
          AND expires_at > now() AND erased_at IS NULL
          AND (security_code_claimed_until IS NULL OR security_code_claimed_until <= now() OR security_code_claim = $3)`,
      [merchantAccountId, id, token, leaseMs],
    );
    return Number(claimed) > 0;
  }

  async releaseSecurityCode(merchantAccountId: string, id: string, token: string): Promise<void> {
    await this.sessions.query(
      `UPDATE checkout_sessions SET security_code_claim = NULL, security_code_claimed_until = NULL
        WHERE merchant_account_id = $1 AND id = $2 AND security_code_claim = $3`,
      [merchantAccountId, id, token],
    );
  }

  async eraseSecurityCode(merchantAccountId: string, id: string): Promise<void> {
    await this.sessions.query(
      `UPDATE checkout_sessions SET security_code_ciphertext = NULL, security_code_erased_at = now(),
              security_code_claim = NULL, security_code_claimed_until = NULL, updated_at = now()
        WHERE merchant_account_id = $1 AND id = $2 AND security_code_ciphertext IS NOT NULL`,
      [merchantAccountId, id],
    );
  }

  /** Every expired session erased, and rows a day past expiry deleted, one statement each. */
  async purgeExpired(): Promise<{ erased: number; deleted: number }> {
    const [, erased] = await this.sessions.query<[unknown, number]>(
      `UPDATE checkout_sessions SET ${ERASE_COLUMNS} WHERE expires_at <= now() AND erased_at IS NULL`,
    );
    const [, deleted] = await this.sessions.query<[unknown, number]>(
      `DELETE FROM checkout_sessions WHERE expires_at < now() - interval '1 day'`,
    );
    return { erased: Number(erased) || 0, deleted: Number(deleted) || 0 };
  }
}
