import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../../../platform/database/timestamp';
import type { ResponseRuleInput, UnmatchedPanAction } from './response-rules';

/** An allow-list entry: the hosts (and methods) a merchant may forward to. */
@Entity({ name: 'vault_forward_configs' })
export class VaultForwardConfig {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ type: 'text', name: 'merchant_account_id' })
  merchantAccountId!: string;

  /** A definition's id (catalog or instance), or `custom-<id>` for a config made with its own hosts. */
  @Column({ type: 'text', name: 'definition_id' })
  definitionId!: string;

  @Column({ type: 'text', name: 'display_name' })
  displayName!: string;

  /**
   * Lower-case `host` (any port-443 scheme the transport rules allow), `host:port`, or an origin
   * (`https://host[:port]`: that scheme and port only).
   */
  @Column({ type: 'text', array: true })
  hosts!: string[];

  @Column({ type: 'text', array: true })
  methods!: string[];

  @Column({ type: 'boolean' })
  enabled!: boolean;

  /** What is done to card data in a JSON answer (response-rules.ts, decisions/0097). */
  @Column({ type: 'jsonb', name: 'response_rules' })
  responseRules!: ResponseRuleInput[];

  /** A card number in the answer that no rule covers (decisions/0098). */
  @Column({ type: 'text', name: 'unmatched_pan' })
  unmatchedPan!: UnmatchedPanAction;

  /**
   * Whether the records of forwards through this config keep their redacted request and answer (decision 0138):
   * off by default, for debugging an integration.
   */
  @Column({ type: 'boolean', name: 'record_bodies' })
  recordBodies!: boolean;

  /** Days those bodies are kept, 1–30 (the operator's FORWARD_RECORD_BODY_RETENTION_DAYS may lower it). */
  @Column({ type: 'smallint', name: 'record_bodies_retention_days' })
  recordBodiesRetentionDays!: number;

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;

  @Column({ type: 'timestamptz', name: 'updated_at', insert: false, update: false })
  updatedAt!: Timestamp;
}
