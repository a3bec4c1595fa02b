import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../../../platform/database/timestamp';
import type { CallerSettings } from './caller-authentication';
import type { FieldMappings } from './field-mappings';

/**
 * An inbound route (decision 0153): where callers outside send card data meant for the merchant, and the merchant's
 * upstream it goes on to once the cards are stored. The caller's secret (shared-secret and hmac kinds) is sealed in
 * `ciphertext`, the upstream headers' values in `upstream_headers`, a part under the same data key (decision 0158;
 * SEALED_TABLES: inbound_routes); these columns are never selected by default.
 */
@Entity({ name: 'inbound_routes' })
export class InboundRoute {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ type: 'text', name: 'merchant_account_id' })
  merchantAccountId!: string;

  @Column({ type: 'text', name: 'display_name' })
  displayName!: string;

  /** The merchant's endpoint: the path after the route's id is added to its path. */
  @Column({ type: 'text', name: 'upstream_url' })
  upstreamUrl!: string;

  @Column({ type: 'text', array: true })
  methods!: string[];

  @Column({ type: 'text', array: true, name: 'path_prefixes' })
  pathPrefixes!: string[];

  /** How callers prove themselves, without the secret. */
  @Column({ type: 'jsonb', name: 'caller_authentication' })
  callerAuthentication!: CallerSettings;

  @Column({ type: 'integer', name: 'max_body_bytes' })
  maxBodyBytes!: number;

  @Column({ type: 'integer', name: 'timeout_seconds' })
  timeoutSeconds!: number;

  @Column({ type: 'jsonb', name: 'field_mappings' })
  fieldMappings!: FieldMappings;

  /** The names of the headers set on every request to the upstream; their values are sealed. */
  @Column({ type: 'text', array: true, name: 'upstream_header_names' })
  upstreamHeaderNames!: string[];

  /** Whether its records keep the sanitised request and the upstream's masked answer (decision 0158). */
  @Column({ type: 'boolean', name: 'record_bodies' })
  recordBodies!: boolean;

  @Column({ type: 'smallint', name: 'record_bodies_retention_days' })
  recordBodiesRetentionDays!: number;

  @Column({ type: 'bytea', nullable: true, select: false })
  ciphertext!: Buffer | null;

  @Column({ type: 'bytea', name: 'upstream_headers', nullable: true, select: false })
  upstreamHeaders!: Buffer | null;

  @Column({ type: 'bytea', name: 'wrapped_key', nullable: true, select: false })
  wrappedKey!: Buffer | null;

  @Column({ type: 'text', name: 'master_key_id', nullable: true, select: false })
  masterKeyId!: string | null;

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;

  @Column({ type: 'timestamptz', name: 'updated_at', insert: false, update: false })
  updatedAt!: Timestamp;
}
