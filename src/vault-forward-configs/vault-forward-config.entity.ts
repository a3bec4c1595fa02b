import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { Timestamp } from '../database/timestamp';

/** An allow-list entry: the hosts (and methods) a merchant may forward to. */
@Entity({ name: 'vault_forward_configs' })
export class VaultForwardConfig {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ type: 'text', name: 'merchant_account_id' })
  merchantAccountId!: string;

  @Column({ type: 'text', name: 'display_name' })
  displayName!: string;

  /** Lower-case host names, `host:port` when the port is not 443. */
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
