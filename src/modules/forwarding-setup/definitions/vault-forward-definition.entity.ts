import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../../../platform/database/timestamp';
import type { AuthenticationDefinition } from './definition';

/** A definition an instance administrator added (the shipped catalog is in catalog.ts, not here). */
@Entity({ name: 'vault_forward_definitions' })
export class VaultForwardDefinition {
  @PrimaryColumn('text')
  id!: string;

  @Column({ type: 'text', name: 'display_name' })
  displayName!: string;

  /** Origins, normalised. */
  @Column({ type: 'text', array: true })
  hosts!: string[];

  @Column({ type: 'jsonb' })
  authentications!: AuthenticationDefinition[];

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;

  @Column({ type: 'timestamptz', name: 'updated_at', insert: false, update: false })
  updatedAt!: Timestamp;
}
