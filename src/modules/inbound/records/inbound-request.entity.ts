import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../../../platform/database/timestamp';

export const INBOUND_OUTCOMES = ['sent', 'refused', 'failed'] as const;
export type InboundOutcome = (typeof INBOUND_OUTCOMES)[number];

/**
 * What an inbound request did (decision 0156): which route, which caller, the payment methods and checkout
 * sessions it stored, and how it ended. Never its body, headers or query: card data is in none of these columns.
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

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;
}
