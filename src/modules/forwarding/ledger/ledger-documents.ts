import { createHash, createPublicKey, KeyObject, verify } from 'node:crypto';

/**
 * The ledger's two documents, as the API answers them, `ledger export` writes them and `ledger verify` reads them:
 * an entry (metadata of one disclosure or outcome, never card data) and a signed tree head. The bytes a leaf hashes
 * and a signature covers are made here and only here, from these documents, so a file verified offline is checked
 * exactly as the database is (decision 0133).
 */

export const LEDGER_ENTRY_KINDS = ['disclosure', 'outcome'] as const;
export type LedgerEntryKind = (typeof LEDGER_ENTRY_KINDS)[number];

export interface LedgerEntryDocument {
  id: string;
  record_id: string;
  kind: LedgerEntryKind;
  merchant_account_id: string;
  api_key_id: string | null;
  config_id: string | null;
  method: string | null;
  target_origin: string | null;
  payment_method_ids: string[];
  fingerprints: string[];
  checkout_session_id: string | null;
  authentication_ids: string[];
  filled_fields: string[];
  status: number | null;
  error_type: string | null;
  /** SHA-256 of the sealed bodies as first stored (base64): the body purge never breaks the entry. */
  bodies_sha256: string | null;
  /** ISO 8601 UTC with microseconds, as PostgreSQL holds it. */
  created_at: string;
  /** Set by the sealer, with the head that covers the entry; null until then. */
  leaf_index: number | null;
  leaf_hash: string | null;
  /** The entry's place in its merchant's own tree (decision 0143): read by the database's verifier, never hashed. */
  merchant_leaf_index?: number | null;
}

/** What a leaf hashes: every field but the tree position, in this order. */
export function entryBytes(e: LedgerEntryDocument): Buffer {
  return Buffer.from(
    JSON.stringify([
      'vault-forward-ledger-entry/1',
      e.id,
      e.record_id,
      e.kind,
      e.merchant_account_id,
      e.api_key_id,
      e.config_id,
      e.method,
      e.target_origin,
      e.payment_method_ids,
      e.fingerprints,
      e.checkout_session_id,
      e.authentication_ids,
      e.filled_fields,
      e.status,
      e.error_type,
      e.bodies_sha256,
      e.created_at,
    ]),
  );
}

export type LedgerHeadKind = 'seal' | 'purge';

export interface LedgerHeadBody {
  /** Set on a merchant's own head (decision 0143): its tree holds that merchant's entries only. */
  merchant_account_id?: string | null;
  seq: number;
  /** `seal`: new entries appended; `purge`: entries below purged_below deleted, the tree unchanged. */
  kind: LedgerHeadKind;
  tree_size: number;
  root_hash: string;
  /** SHA-256 of the previous head's signed bytes (base64); null for the first head. */
  previous_hash: string | null;
  /** The perfect subtrees of the tree, largest first: what the next seal grows from. */
  frontier: string[];
  /** Entries with leaf_index below this were purged (retention); their subtrees are `retained`. */
  purged_below: number;
  retained: string[];
  signed_at: string;
  key_id: string;
}

export interface LedgerHeadDocument extends LedgerHeadBody {
  /** ECDSA P-256 with SHA-256 over headBytes, r || s (IEEE P1363), base64. */
  signature: string;
}

/**
 * What a head's signature covers. A merchant's head names itself and its merchant first, so it can never pass for a
 * head of the shared tree, nor one merchant's for another's.
 */
export function headBytes(h: LedgerHeadBody): Buffer {
  const names = h.merchant_account_id
    ? ['vault-forward-ledger-merchant-head/1', h.merchant_account_id]
    : ['vault-forward-ledger-head/1'];
  return Buffer.from(
    JSON.stringify([
      ...names,
      h.seq,
      h.kind,
      h.tree_size,
      h.root_hash,
      h.previous_hash,
      h.frontier,
      h.purged_below,
      h.retained,
      h.signed_at,
      h.key_id,
    ]),
  );
}

/** What the next head names as its previous_hash. */
export function headHash(h: LedgerHeadBody): string {
  return createHash('sha256').update(headBytes(h)).digest('base64');
}

/** A public key's id: the first 16 hex digits of the SHA-256 of its SubjectPublicKeyInfo. */
export function ledgerKeyId(publicKey: KeyObject): string {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('hex').slice(0, 16);
}

export function headSignatureValid(h: LedgerHeadDocument, publicKey: KeyObject | string): boolean {
  const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
  return verify('sha256', headBytes(h), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(h.signature, 'base64'));
}
