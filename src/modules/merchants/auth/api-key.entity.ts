import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { JWK } from 'jose';
import { Timestamp } from '../../../platform/database/timestamp';

export type ApiKeyAlgorithm = 'ES512' | 'ES256';

/**
 * The public half of a merchant's (or the operator's) signing key. The private key never reaches the
 * service: the CLI writes it to a file and the caller signs its own short-lived tokens.
 */
@Entity({ name: 'api_keys' })
export class ApiKey {
  /** RFC 7638 JWK thumbprint (SHA-256, base64url) of the public key: the JWT `kid`. */
  @PrimaryColumn({ type: 'text' })
  id!: string;

  /** null for an instance key, which picks the merchant per request. */
  @Column({ type: 'text', name: 'merchant_account_id', nullable: true })
  merchantAccountId!: string | null;

  @Column({ type: 'text' })
  algorithm!: ApiKeyAlgorithm;

  @Column({ type: 'jsonb', name: 'public_key' })
  publicKey!: JWK;

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;

  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true, insert: false, update: false })
  revokedAt!: Timestamp | null;
}
