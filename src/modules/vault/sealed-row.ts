import { Column } from 'typeorm';

/**
 * The three columns of a row whose secret the vault seals whole (SecretSealer's envelope): an entity
 * that keeps one sealed value extends this. Never selected by default: only the vault's own queries read them.
 */
export abstract class SealedRow {
  @Column({ type: 'bytea', select: false })
  ciphertext!: Buffer;

  @Column({ type: 'bytea', name: 'wrapped_key', select: false })
  wrappedKey!: Buffer;

  @Column({ type: 'text', name: 'master_key_id', select: false })
  masterKeyId!: string;
}
