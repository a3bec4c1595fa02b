import { KeyObject } from 'node:crypto';
import { entryBytes, headHash, headSignatureValid, LedgerEntryDocument, LedgerHeadDocument } from './ledger-documents';
import { appendLeaves, leafHash, rootFromFrontier } from './merkle';

/** An entry an export names only by its leaf (another merchant's, or one before --since): its hash is taken as given. */
interface LedgerLeafOnly {
  leaf_index: number;
  leaf_hash: string;
}

export type LedgerLine = LedgerEntryDocument | LedgerLeafOnly;

export interface LedgerFinding {
  problem:
    | 'entry-changed'
    | 'entry-removed'
    | 'entry-inserted'
    | 'entry-impossible'
    | 'entry-without-record'
    | 'record-without-entry'
    | 'head-signature'
    | 'head-chain'
    | 'head-order'
    | 'head-root'
    | 'head-missing';
  message: string;
  leaf_index?: number;
  entry_id?: string;
  record_id?: string;
  merchant_account_id?: string;
  seq?: number;
}

interface LedgerVerification {
  ok: boolean;
  heads: number;
  entries: number;
  tree_size: number;
  /** The newest head read, by seq and hash (SHA-256 of its signed bytes): what an auditor keeps to pass to --expect-head. */
  newest_head: { seq: number; hash: string } | null;
  /** In the ledger's order: heads first, then entries by leaf; `first` is the earliest entry finding, else a head's. */
  findings: LedgerFinding[];
  first: LedgerFinding | null;
}

interface VerifyOptions {
  /** Report entry findings of this merchant only (the roots are still recomputed from every leaf). */
  merchant?: string;
  /** Report entries created, and heads signed, at or after this instant only. */
  since?: Date;
}

const isEntry = (line: LedgerLine): line is LedgerEntryDocument => 'record_id' in line;
const b64 = (hash: Buffer) => hash.toString('base64');

/**
 * `ledger verify` (decision 0133), on the database or on an export, with the public key alone: each head's
 * signature, its chain to the previous one and its place; then every entry's leaf recomputed from its content, the
 * leaves contiguous, and each head's root recomputed from them. What it finds names the entry or head concerned.
 */
export async function verifyLedger(
  heads: readonly LedgerHeadDocument[],
  lines: AsyncIterable<LedgerLine> | Iterable<LedgerLine>,
  publicKey: KeyObject | string,
  options: VerifyOptions = {},
): Promise<LedgerVerification> {
  const headFindings: LedgerFinding[] = [];
  const entryFindings: LedgerFinding[] = [];
  const since = options.since?.toISOString();
  const reportHead = (head: LedgerHeadDocument, finding: LedgerFinding) => {
    if (!since || head.signed_at >= since) headFindings.push({ ...finding, seq: head.seq });
  };
  const reportEntry = (entry: LedgerLine, finding: LedgerFinding) => {
    if (isEntry(entry)) {
      if (options.merchant && entry.merchant_account_id !== options.merchant) return;
      if (since && entry.created_at < since) return;
      entryFindings.push({
        ...finding,
        leaf_index: entry.leaf_index ?? undefined,
        entry_id: entry.id,
        record_id: entry.record_id,
        merchant_account_id: entry.merchant_account_id,
      });
    } else if (!options.merchant && !since) entryFindings.push({ ...finding, leaf_index: entry.leaf_index });
  };

  heads.forEach((head, i) => {
    const previous = heads[i - 1];
    if (head.seq !== i + 1)
      reportHead(head, { problem: 'head-order', message: `head number ${i + 1} in order says it is head ${head.seq}` });
    if (!safeValid(head, publicKey))
      reportHead(head, { problem: 'head-signature', message: `head ${head.seq}: its signature does not verify` });
    const expected = previous ? headHash(previous) : null;
    if (head.previous_hash !== expected)
      reportHead(head, {
        problem: 'head-chain',
        message: `head ${head.seq}: does not chain to head ${previous?.seq ?? '(none)'} before it`,
      });
    if (previous && head.tree_size < previous.tree_size)
      reportHead(head, { problem: 'head-chain', message: `head ${head.seq}: the tree shrank` });
  });

  const latest = heads[heads.length - 1];
  const purgedBelow = latest?.purged_below ?? 0;
  const treeSize = latest?.tree_size ?? 0;
  // The roots are recomputed as the leaves stream past: the frontier grows from the last purge's kept subtrees.
  let frontier: Buffer[] = (latest?.retained ?? []).map((hash) => Buffer.from(hash, 'base64'));
  let next = purgedBelow;
  let rootsComputable = true;
  const bySize = heads.filter((head) => head.tree_size > purgedBelow).sort((a, b) => a.tree_size - b.tree_size);
  let headAt = 0;
  const checkRoots = () => {
    while (headAt < bySize.length && bySize[headAt].tree_size === next) {
      const head = bySize[headAt++];
      if (rootsComputable && b64(rootFromFrontier(frontier)) !== head.root_hash)
        reportHead(head, {
          problem: 'head-root',
          message: `head ${head.seq}: its root does not match the entries below leaf ${head.tree_size}`,
        });
    }
  };
  let count = 0;
  for await (const line of lines) {
    count++;
    const leaf = line.leaf_index;
    if (leaf === null || leaf === undefined) {
      if (line.leaf_hash !== null && line.leaf_hash !== undefined)
        reportEntry(line, { problem: 'entry-impossible', message: 'an entry with a leaf hash but no leaf index' });
      continue;
    }
    // Values the sealer never writes (the schema refuses them too, decision 0143), and a second entry at one leaf.
    if (!Number.isSafeInteger(leaf) || leaf < 0 || !line.leaf_hash || (leaf < next && leaf >= purgedBelow)) {
      reportEntry(line, {
        problem: 'entry-impossible',
        message:
          leaf < next && leaf >= purgedBelow
            ? `leaf ${leaf} appears twice`
            : `entry at leaf ${leaf}: a leaf index the sealer never sets, or a leaf without its hash`,
      });
      continue;
    }
    if (leaf < purgedBelow || leaf >= treeSize) {
      reportEntry(line, {
        problem: 'entry-inserted',
        message: `entry at leaf ${leaf}: no signed head covers it (the sealer sets a leaf only with its head)`,
      });
      continue;
    }
    if (leaf > next) {
      entryFindings.push({
        problem: 'entry-removed',
        message: `leaves ${next}${leaf - 1 > next ? `–${leaf - 1}` : ''} are missing`,
        leaf_index: next,
      });
      rootsComputable = false;
      next = leaf;
    }
    let hash: Buffer = Buffer.from(line.leaf_hash ?? '', 'base64');
    if (isEntry(line)) {
      const computed = leafHash(entryBytes(line));
      if (line.leaf_hash !== b64(computed))
        reportEntry(line, {
          problem: 'entry-changed',
          message: `entry ${line.id} (leaf ${leaf}, forward ${line.record_id}): its content does not hash to its leaf`,
        });
      hash = computed;
    }
    if (rootsComputable) frontier = appendLeaves(next, frontier, [hash]);
    next++;
    checkRoots();
  }
  if (next < treeSize) {
    entryFindings.push({
      problem: 'entry-removed',
      message: `leaves ${next}–${treeSize - 1} are missing`,
      leaf_index: next,
    });
  }
  const findings = [...headFindings, ...entryFindings];
  return {
    ok: findings.length === 0,
    heads: heads.length,
    entries: count,
    tree_size: treeSize,
    newest_head: latest ? { seq: latest.seq, hash: headHash(latest) } : null,
    findings,
    first: entryFindings[0] ?? headFindings[0] ?? null,
  };
}

/** A head an auditor saw (its document, or only its hash) that a verification must find in the chain it read. */
export type ExpectedHead = LedgerHeadDocument | { hash: string };

/**
 * Whether the chain read still holds the head seen before (decision 0143): a chain cut after it, or rewritten
 * from it, is reported. `heads` are every head read, of the shared tree and of the merchants'.
 */
export function expectedHeadFinding(
  heads: readonly LedgerHeadDocument[],
  expected: ExpectedHead,
): LedgerFinding | null {
  const hash = 'hash' in expected ? expected.hash : headHash(expected);
  if (heads.some((head) => headHash(head) === hash)) return null;
  if ('hash' in expected)
    return {
      problem: 'head-missing',
      message: `no head read hashes to ${hash}: the chain was cut or rewritten after the head seen`,
    };
  const merchant = expected.merchant_account_id ?? null;
  const chain = heads.filter((head) => (head.merchant_account_id ?? null) === merchant);
  const newest = chain[chain.length - 1];
  const whose = merchant ? `merchant ${merchant}'s chain` : 'the chain';
  return {
    problem: 'head-missing',
    seq: expected.seq,
    ...(merchant ? { merchant_account_id: merchant } : {}),
    message:
      !newest || newest.seq < expected.seq
        ? `${whose} ends at head ${newest?.seq ?? '(none)'}, but head ${expected.seq} was seen: it was cut`
        : `head ${expected.seq} of ${whose} is not the one seen: it was rewritten`,
  };
}

/** A verification with more findings (the database's completeness reads, the expected head): ok only without any. */
export function withFindings(result: LedgerVerification, more: readonly LedgerFinding[]): LedgerVerification {
  const findings = [...result.findings, ...more];
  return { ...result, ok: findings.length === 0, findings, first: result.first ?? more[0] ?? null };
}

function safeValid(head: LedgerHeadDocument, publicKey: KeyObject | string): boolean {
  try {
    return headSignatureValid(head, publicKey);
  } catch {
    return false;
  }
}
