import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../../../platform/database/timestamp';
import type { LedgerHeadDocument, LedgerHeadKind } from './ledger-documents';

/**
 * A signed tree head (decision 0133): its columns are the document it signed; listed newest first. A merchant's own
 * head has its merchant set (decision 0143); the shared tree's has none.
 */
@Entity({ name: 'vault_forward_ledger_heads' })
export class LedgerHeadEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ type: 'text', name: 'merchant_account_id', nullable: true })
  merchantAccountId!: string | null;

  /** bigint: a string, as pg reads it. */
  @Column({ type: 'bigint' })
  seq!: string;

  @Column({ type: 'text' })
  kind!: LedgerHeadKind;

  @Column({ type: 'bigint', name: 'tree_size' })
  treeSize!: string;

  @Column({ type: 'text', name: 'root_hash' })
  rootHash!: string;

  @Column({ type: 'text', name: 'previous_hash', nullable: true })
  previousHash!: string | null;

  @Column({ type: 'text', array: true })
  frontier!: string[];

  @Column({ type: 'bigint', name: 'purged_below' })
  purgedBelow!: string;

  @Column({ type: 'text', array: true })
  retained!: string[];

  /** As signed (ISO 8601 UTC with milliseconds). */
  @Column({ type: 'text', name: 'signed_at' })
  signedAt!: string;

  @Column({ type: 'text', name: 'key_id' })
  keyId!: string;

  @Column({ type: 'text' })
  signature!: string;

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;
}

export function headDocument(h: LedgerHeadEntity): LedgerHeadDocument {
  return {
    ...(h.merchantAccountId ? { merchant_account_id: h.merchantAccountId } : {}),
    seq: Number(h.seq),
    kind: h.kind,
    tree_size: Number(h.treeSize),
    root_hash: h.rootHash,
    previous_hash: h.previousHash,
    frontier: h.frontier,
    purged_below: Number(h.purgedBelow),
    retained: h.retained,
    signed_at: h.signedAt,
    key_id: h.keyId,
    signature: h.signature,
  };
}
