import { createHash } from 'node:crypto';

/**
 * The ledger's Merkle tree, hashed as RFC 9162 §2.1 (Certificate Transparency v2) says: a leaf is
 * SHA-256(0x00 || entry), an inner node SHA-256(0x01 || left || right), the empty tree SHA-256(""), and a tree
 * of n > 1 leaves splits at the largest power of two below n. Pure: the sealer, the proof routes and the CLI's
 * verifier all use it; tests check it against a verifier of their own.
 */

export function leafHash(entry: Buffer): Buffer {
  return createHash('sha256').update(Buffer.of(0)).update(entry).digest();
}

function nodeHash(left: Buffer, right: Buffer): Buffer {
  return createHash('sha256').update(Buffer.of(1)).update(left).update(right).digest();
}

const EMPTY_ROOT = createHash('sha256').digest();

/** The largest power of two below n (n > 1). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The perfect subtrees [0, n) falls into, largest first (n's binary digits): all a tree of n leaves needs to
 * grow by appending, and what a purge keeps of the leaves it deletes.
 */
export function frontierSizes(n: number): number[] {
  const sizes: number[] = [];
  // Arithmetic, not bitwise: a ledger may pass 2^31 leaves.
  for (let bit = 2 ** Math.floor(Math.log2(Math.max(n, 1))); bit >= 1; bit /= 2)
    if (Math.floor(n / bit) % 2) sizes.push(bit);
  return sizes;
}

/** The frontier of n + leaves.length leaves, from the frontier of n. */
export function appendLeaves(size: number, frontier: readonly Buffer[], leaves: readonly Buffer[]): Buffer[] {
  const hashes = [...frontier];
  const sizes = frontierSizes(size);
  if (sizes.length !== hashes.length) throw new Error(`a frontier of ${size} leaves has ${sizes.length} hashes`);
  for (const leaf of leaves) {
    hashes.push(leaf);
    sizes.push(1);
    while (sizes.length > 1 && sizes[sizes.length - 1] === sizes[sizes.length - 2]) {
      const right = hashes.pop()!;
      const left = hashes.pop()!;
      sizes.pop();
      sizes[sizes.length - 1] *= 2;
      hashes.push(nodeHash(left, right));
    }
  }
  return hashes;
}

/** The root of the tree whose frontier this is: its subtrees folded from the smallest. */
export function rootFromFrontier(frontier: readonly Buffer[]): Buffer {
  if (frontier.length === 0) return EMPTY_ROOT;
  let root = frontier[frontier.length - 1];
  for (let i = frontier.length - 2; i >= 0; i--) root = nodeHash(frontier[i], root);
  return root;
}

/**
 * Subtree hashes of a tree whose leaves below `from` may be gone: they are then known only through the
 * frontier of `from` leaves (a purge head's `retained`), which is every subtree a proof about a later leaf needs.
 */
export class MerkleRange {
  private readonly known = new Map<string, Buffer>();

  constructor(
    private readonly from: number,
    /** Leaf hashes from `from` on, in order. */
    private readonly leaves: readonly Buffer[],
    retained: readonly Buffer[] = [],
  ) {
    let start = 0;
    const sizes = frontierSizes(from);
    if (sizes.length !== retained.length) throw new Error(`${from} purged leaves need ${sizes.length} hashes`);
    sizes.forEach((size, i) => {
      this.known.set(`${start}:${start + size}`, retained[i]);
      start += size;
    });
  }

  get size(): number {
    return this.from + this.leaves.length;
  }

  /** MTH(D[lo:hi]) (RFC 9162 §2.1.1). */
  hash(lo: number, hi: number): Buffer {
    if (hi <= lo) return EMPTY_ROOT;
    const known = this.known.get(`${lo}:${hi}`);
    if (known) return known;
    if (hi - lo === 1) {
      if (lo < this.from) throw new PurgedRangeError(lo);
      return this.leaves[lo - this.from];
    }
    const k = split(hi - lo);
    const hash = nodeHash(this.hash(lo, lo + k), this.hash(lo + k, hi));
    // Kept: the paths of several leaves, and a root after them, share most of their subtrees.
    this.known.set(`${lo}:${hi}`, hash);
    return hash;
  }

  root(n = this.size): Buffer {
    return this.hash(0, n);
  }

  /** PATH(m, D[0:n]) (RFC 9162 §2.1.3.1), leaf to root. */
  inclusionPath(m: number, n = this.size): Buffer[] {
    const path = (index: number, lo: number, hi: number): Buffer[] => {
      if (hi - lo <= 1) return [];
      const k = split(hi - lo);
      return index < k
        ? [...path(index, lo, lo + k), this.hash(lo + k, hi)]
        : [...path(index - k, lo + k, hi), this.hash(lo, lo + k)];
    };
    if (m < 0 || m >= n || n > this.size) throw new RangeError(`no leaf ${m} in a tree of ${n}`);
    return path(m, 0, n);
  }

  /** PROOF(m, D[0:n]) (RFC 9162 §2.1.4.1): that the tree of m leaves is the start of the tree of n. */
  consistencyProof(m: number, n = this.size): Buffer[] {
    const subproof = (size: number, lo: number, hi: number, whole: boolean): Buffer[] => {
      if (size === hi - lo) return whole ? [] : [this.hash(lo, hi)];
      const k = split(hi - lo);
      return size <= k
        ? [...subproof(size, lo, lo + k, whole), this.hash(lo + k, hi)]
        : [...subproof(size - k, lo + k, hi, false), this.hash(lo, lo + k)];
    };
    if (m < 1 || m > n || n > this.size) throw new RangeError(`no consistency proof from ${m} to ${n}`);
    return subproof(m, 0, n, true);
  }
}

/** A proof would need a leaf the retention purge deleted (only the subtrees it kept are known). */
export class PurgedRangeError extends Error {
  constructor(readonly leaf: number) {
    super(`leaf ${leaf} was purged`);
  }
}
