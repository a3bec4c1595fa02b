import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../../../platform/database/timestamp';
import type { CardScheme } from '../../vault/card';

/**
 * A short-lived holder of one card and its security code (docs/checkout-sessions.md). The secret
 * columns are never selected through the entity: CheckoutSessionCards reads them with its own queries.
 */
@Entity({ name: 'checkout_sessions' })
export class CheckoutSession {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ type: 'text', name: 'merchant_account_id' })
  merchantAccountId!: string;

  @Column({ type: 'jsonb', nullable: true })
  metadata!: Record<string, string> | null;

  @Column({ type: 'timestamptz', name: 'expires_at' })
  expiresAt!: Timestamp;

  /** `card`: number sealed here; `id`: a stored payment method's card; null: none collected (or erased). */
  @Column({ type: 'text', name: 'card_source', nullable: true })
  cardSource!: 'card' | 'id' | null;

  @Column({ type: 'uuid', name: 'payment_method_id', nullable: true })
  paymentMethodId!: string | null;

  /** The card's fingerprint (its payment method's for `id`), what the disclosure budgets count (decision 0142). */
  @Column({ type: 'text', name: 'card_fingerprint', nullable: true, select: false })
  cardFingerprint!: string | null;

  @Column({ type: 'text', nullable: true })
  scheme!: CardScheme | null;

  /** Last four digits. */
  @Column({ type: 'text', nullable: true })
  label!: string | null;

  @Column({ type: 'text', name: 'expiration_date', nullable: true })
  expirationDate!: string | null;

  @Column({ type: 'bytea', select: false, nullable: true })
  ciphertext!: Buffer | null;

  @Column({ type: 'bytea', name: 'security_code_ciphertext', select: false, nullable: true })
  securityCodeCiphertext!: Buffer | null;

  /** 3-D Secure values (JSON), a part of the same envelope; null when none were given (decision 0101). */
  @Column({ type: 'bytea', name: 'three_d_secure_ciphertext', select: false, nullable: true })
  threeDSecureCiphertext!: Buffer | null;

  @Column({ type: 'bytea', name: 'wrapped_key', select: false, nullable: true })
  wrappedKey!: Buffer | null;

  @Column({ type: 'text', name: 'master_key_id', select: false, nullable: true })
  masterKeyId!: string | null;

  @Column({ type: 'timestamptz', name: 'security_code_erased_at', nullable: true })
  securityCodeErasedAt!: Timestamp | null;

  /** The forward holding the security code while it is in flight (CheckoutSessionCards.load), until its lease lapses. */
  @Column({ type: 'text', name: 'security_code_claim', nullable: true, select: false })
  securityCodeClaim!: string | null;

  @Column({ type: 'timestamptz', name: 'security_code_claimed_until', nullable: true, select: false })
  securityCodeClaimedUntil!: Timestamp | null;

  @Column({ type: 'timestamptz', name: 'erased_at', nullable: true })
  erasedAt!: Timestamp | null;

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;

  @Column({ type: 'timestamptz', name: 'updated_at', insert: false, update: false })
  updatedAt!: Timestamp;
}
