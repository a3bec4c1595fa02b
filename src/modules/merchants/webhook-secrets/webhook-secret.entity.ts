import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../../../platform/database/timestamp';
import { SealedRow } from '../../vault/sealed-row';

/**
 * A merchant account's secret for signing the callbacks of queued forwards (Standard Webhooks). Its
 * bytes exist only inside `ciphertext` (SecretSealer; listed in SEALED_TABLES for key rotation).
 */
@Entity({ name: 'vault_forward_webhook_secrets' })
export class WebhookSecret extends SealedRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ type: 'text', name: 'merchant_account_id' })
  merchantAccountId!: string;

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;

  /** When a newer secret replaced it; null while it is the current one. */
  @Column({ type: 'timestamptz', name: 'rotated_at', insert: false, update: false, nullable: true })
  rotatedAt!: Timestamp | null;

  /** rotated_at + 24 h: until then it still signs, beside the current one. */
  @Column({ type: 'timestamptz', name: 'expires_at', insert: false, update: false, nullable: true })
  expiresAt!: Timestamp | null;
}
