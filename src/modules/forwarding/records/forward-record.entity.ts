import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../../../platform/database/timestamp';

/**
 * A forward record: what one forward did. Its bodies and header values only in the redacted, capped
 * form of decision 0104, sealed, only when its config asks (decision 0138) and for the days it says; not selected by default (the
 * list does not show them), opened by ForwardRecordsReader.get. The public API calls it
 * a vault forward request (`/vault-forward/requests`, `type: "vault-forward-request"`), as Gr4vy does;
 * the code calls it a forward record everywhere.
 */
@Entity({ name: 'vault_forward_requests' })
export class ForwardRecordEntity {
  /** The request id (x-request-id / x-vault-forward-request-id). */
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text', name: 'merchant_account_id' })
  merchantAccountId!: string;

  @Column({ type: 'uuid', name: 'config_id', nullable: true })
  configId!: string | null;

  @Column({ type: 'text', nullable: true })
  method!: string | null;

  /** Scheme, host, port and path: the query string is left out (it may carry data). */
  @Column({ type: 'text', name: 'target_url', nullable: true })
  targetUrl!: string | null;

  @Column({ type: 'integer', nullable: true })
  status!: number | null;

  @Column({ type: 'double precision', name: 'duration_ms' })
  durationMs!: number;

  @Column({ type: 'uuid', array: true, name: 'payment_method_ids' })
  paymentMethodIds!: string[];

  /** The checkout session whose card the forward filled in, if any. */
  @Column({ type: 'uuid', name: 'checkout_session_id', nullable: true })
  checkoutSessionId!: string | null;

  @Column({ type: 'uuid', array: true, name: 'authentication_ids' })
  authenticationIds!: string[];

  /** x-vault-forward-merchant-initiated: the merchant, not the cardholder, started the forward. */
  @Column({ type: 'boolean', name: 'merchant_initiated', default: false })
  merchantInitiated!: boolean;

  /** The problem code when the service itself answered with an error. */
  @Column({ type: 'text', name: 'error_type', nullable: true })
  errorType!: string | null;

  /**
   * The redacted request headers, request body and answer (decision 0104) as one JSON value sealed with
   * SecretSealer (AAD: forward-record-bodies, merchant, id); null when not recorded or purged.
   */
  @Column({ type: 'bytea', nullable: true, select: false })
  ciphertext!: Buffer | null;

  @Column({ type: 'bytea', name: 'wrapped_key', nullable: true, select: false })
  wrappedKey!: Buffer | null;

  @Column({ type: 'text', name: 'master_key_id', nullable: true, select: false })
  masterKeyId!: string | null;

  @Column({ type: 'boolean', name: 'request_body_truncated', default: false, select: false })
  requestBodyTruncated!: boolean;

  @Column({ type: 'boolean', name: 'response_body_truncated', default: false, select: false })
  responseBodyTruncated!: boolean;

  /**
   * Days the bodies are kept from created_at (decision 0138: the config's record_bodies_retention_days, capped by
   * the operator's ceiling), set when they were recorded and kept once the purge has nulled them; null when no body
   * was recorded. Not selected by default, as the bodies.
   */
  @Column({ type: 'smallint', name: 'bodies_retention_days', nullable: true, select: false })
  bodiesRetentionDays!: number | null;

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;
}
