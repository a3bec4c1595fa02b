import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../../../platform/database/timestamp';

export const INBOUND_OUTCOMES = ['sent', 'refused', 'failed'] as const;
export type InboundOutcome = (typeof INBOUND_OUTCOMES)[number];

/**
 * What an inbound request did (decision 0156): which route, which caller, the payment methods and checkout
 * sessions it stored, and how it ended. Never its headers or query; its body and the upstream's answer only when
 * the route records them (decision 0158), redacted and sealed (`ciphertext`, SEALED_TABLES: inbound_requests,
 * never selected by default) until `bodies_kept_until`.
 */
@Entity({ name: 'inbound_requests' })
export class InboundRequest {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ type: 'text', name: 'merchant_account_id' })
  merchantAccountId!: string;

  @Column({ type: 'uuid', name: 'route_id' })
  routeId!: string;

  /** The request id of the log line (x-request-id). */
  @Column({ type: 'text', name: 'request_id' })
  requestId!: string;

  /** How the caller proved itself: the kind, and for mutual-tls the certificate's subject and fingerprint. */
  @Column({ type: 'text' })
  caller!: string;

  @Column({ type: 'text' })
  method!: string;

  /** The path after the route's id, card numbers masked, without the query. */
  @Column({ type: 'text' })
  path!: string;

  /** `sent`: the upstream answered; `refused`: ours, 4xx, nothing sent; `failed`: ours, 5xx. */
  @Column({ type: 'text' })
  outcome!: InboundOutcome;

  /** The status the caller got. */
  @Column({ type: 'integer' })
  status!: number;

  @Column({ type: 'text', name: 'problem_code', nullable: true })
  problemCode!: string | null;

  @Column({ type: 'integer', name: 'upstream_status', nullable: true })
  upstreamStatus!: number | null;

  @Column({ type: 'uuid', array: true, name: 'payment_method_ids' })
  paymentMethodIds!: string[];

  @Column({ type: 'uuid', array: true, name: 'checkout_session_ids' })
  checkoutSessionIds!: string[];

  /** When the purge erases the kept bodies; null when none were kept (and stays once they are erased). */
  @Column({ type: 'timestamptz', name: 'bodies_kept_until', nullable: true, insert: false, update: false })
  bodiesKeptUntil!: Timestamp | null;

  @Column({ type: 'boolean', name: 'request_body_truncated' })
  requestBodyTruncated!: boolean;

  @Column({ type: 'boolean', name: 'response_body_truncated' })
  responseBodyTruncated!: boolean;

  @Column({ type: 'bytea', nullable: true, select: false })
  ciphertext!: Buffer | null;

  @Column({ type: 'bytea', name: 'wrapped_key', nullable: true, select: false })
  wrappedKey!: Buffer | null;

  @Column({ type: 'text', name: 'master_key_id', nullable: true, select: false })
  masterKeyId!: string | null;

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;
}
