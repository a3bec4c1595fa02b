import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../database/timestamp';

/**
 * A forward record: what one forward did, never a body, never a header value. The public API calls it
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

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;
}
