import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../database/timestamp';
import type { CardScheme } from '../vault/card';

@Entity({ name: 'payment_methods' })
export class PaymentMethod {
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

  @Column({ type: 'text', name: 'external_identifier', nullable: true })
  externalIdentifier!: string | null;

  // Never selected by default: only the vault reads these, through its own queries.
  @Column({ type: 'bytea', select: false })
  ciphertext!: Buffer;

  @Column({ type: 'bytea', name: 'wrapped_key', select: false })
  wrappedKey!: Buffer;

  @Column({ type: 'text', name: 'master_key_id', select: false })
  masterKeyId!: string;

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;

  @Column({ type: 'timestamptz', name: 'updated_at', insert: false, update: false })
  updatedAt!: Timestamp;
}
