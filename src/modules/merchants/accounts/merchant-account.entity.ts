import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../../../platform/database/timestamp';

/** The tenant: every other resource belongs to exactly one merchant account. */
@Entity({ name: 'merchant_accounts' })
export class MerchantAccount {
  /** A slug such as `default` or `acme-eu`, chosen at creation and never changed. */
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text', name: 'display_name' })
  displayName!: string;

  /** Web origins whose pages may embed this merchant's Secure Fields (decision 0140), normalised; none by default. */
  @Column({ type: 'text', array: true, name: 'secure_fields_origins', insert: false, update: false })
  secureFieldsOrigins!: string[];

  // Written by the database (DEFAULT / now()), read back as microsecond-exact Timestamps.
  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;

  @Column({ type: 'timestamptz', name: 'updated_at', insert: false, update: false })
  updatedAt!: Timestamp;
}
