import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Buyer } from '../buyers/buyer.entity';
import { Timestamp } from '../../../platform/database/timestamp';
import type { CardScheme } from '../../vault/card';
import { SealedRow } from '../../vault/sealed-row';

@Entity({ name: 'payment_methods' })
export class PaymentMethod extends SealedRow {
  /** Chosen by the service before encryption: the ciphertext is bound to it. */
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ type: 'text', name: 'merchant_account_id' })
  merchantAccountId!: string;

  @Column({ type: 'uuid', name: 'buyer_id', nullable: true })
  buyerId!: string | null;

  @Column({ type: 'text' })
  method!: 'card';

  @Column({ type: 'text' })
  scheme!: CardScheme;

  /** Last four digits. */
  @Column({ type: 'text' })
  label!: string;

  /** MM/YY */
  @Column({ type: 'text', name: 'expiration_date' })
  expirationDate!: string;

  @Column({ type: 'text' })
  fingerprint!: string;

  /** First six digits, only for numbers of 15 digits or more; null otherwise (docs/decisions/0059). */
  @Column({ type: 'text', nullable: true })
  bin!: string | null;

  /** Forwards that released this card's data; written by the forward-record batch writer only. */
  @Column({ type: 'integer', name: 'usage_count', insert: false, update: false })
  usageCount!: number;

  @Column({ type: 'timestamptz', name: 'last_used_at', nullable: true, insert: false, update: false })
  lastUsedAt!: Timestamp | null;

  @Column({ type: 'text', name: 'external_identifier', nullable: true })
  externalIdentifier!: string | null;

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;

  @Column({ type: 'timestamptz', name: 'updated_at', insert: false, update: false })
  updatedAt!: Timestamp;

  /** Not a column: joined in by PaymentMethodsService when the API shows the card. */
  buyer?: Buyer | null;
}
