import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../database/timestamp';

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

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;

  @Column({ type: 'timestamptz', name: 'updated_at', insert: false, update: false })
  updatedAt!: Timestamp;
}
