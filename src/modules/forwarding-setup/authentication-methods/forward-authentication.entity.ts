import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../../../platform/database/timestamp';
import type { AuthenticationKind } from '../authentication-kinds/kinds';
import type { MethodDetails, MethodWarning } from '../authentication-kinds/method-fields';
import { SealedRow } from '../../vault/sealed-row';

/**
 * A stored authentication method of one forwarding config. Secret fields exist only inside
 * `ciphertext` (sealed by SecretSealer, listed in SEALED_TABLES for key rotation); `fields` holds the
 * non-secret ones exactly as entered.
 */
@Entity({ name: 'vault_forward_authentications' })
export class ForwardAuthentication extends SealedRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ type: 'text', name: 'merchant_account_id' })
  merchantAccountId!: string;

  @Column({ type: 'uuid', name: 'config_id' })
  configId!: string;

  @Column({ type: 'text' })
  kind!: AuthenticationKind;

  @Column({ type: 'text' })
  label!: string;

  @Column({ type: 'jsonb' })
  fields!: Record<string, string>;

  /** The shape it was created in, and is answered in: ours (`fields: {…}`) or Gr4vy's (`fields: [{key, value}]`). */
  @Column({ type: 'text', insert: false, update: false })
  shape!: 'ours' | 'gr4vy';

  /** The warnings that needed the secrets to work out, stored at write time. */
  @Column({ type: 'jsonb' })
  warnings!: MethodWarning[];

  /** What may be shown of the secret fields (a response key's facts), stored at write time. */
  @Column({ type: 'jsonb', name: 'secret_details' })
  secretDetails!: MethodDetails;

  @Column({ type: 'integer', insert: false })
  version!: number;

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;

  @Column({ type: 'timestamptz', name: 'updated_at', insert: false, update: false })
  updatedAt!: Timestamp;
}
