import { createHash } from 'node:crypto';

/*
 * The disclosure ledger as docs/decisions/0133 specifies it, written here from the decision and RFC 9162, not
 * imported from src/: what the tests check the service's leaves, heads and proofs against.
 */

const sha256 = (...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest();

/** RFC 9162 §2.1.3.2: verify an inclusion path, leaf to root. */
export function rootFromInclusionPath(
  leafIndex: number,
  treeSize: number,
  leaf: Buffer,
  path: Buffer[],
): Buffer | null {
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = sha256(Buffer.of(1), p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = sha256(Buffer.of(1), r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}

/** The entry's leaf as docs/decisions/0133 specifies it: SHA-256(0x00 || the JSON array of its fields). */
export function leafOf(e: Record<string, any>): Buffer {
  const fields = [
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
  ];
  return sha256(Buffer.of(0), Buffer.from(JSON.stringify(fields)));
}

/**
 * The head's signed bytes as the decisions specify them: 0133's for the shared tree, 0143's (its own name and the
 * merchant first) for a merchant's own tree.
 */
export function headBytesOf(h: Record<string, any>): Buffer {
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
