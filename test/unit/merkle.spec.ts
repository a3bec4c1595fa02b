import { createHash } from 'node:crypto';
import {
  appendLeaves,
  frontierSizes,
  leafHash,
  MerkleRange,
  PurgedRangeError,
  rootFromFrontier,
} from '../../src/modules/forwarding/ledger/merkle';
import { rootFromInclusionPath } from '../support/ledger-spec';

/*
 * The ledger's Merkle tree against Certificate Transparency's published test vectors (the eight leaves and
 * their roots, an inclusion path and a consistency proof of google/certificate-transparency's merkle tree tests,
 * RFC 6962 hashing, which RFC 9162 keeps), and its proofs against RFC 9162 §2.1.3.2 / §2.1.4.2 verifiers written
 * here (the inclusion verifier is test/support/ledger-spec.ts's).
 */
const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'];
const ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const hex = (b: Buffer) => b.toString('hex');
const sha256 = (...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest();
const leaves = LEAVES.map((l) => leafHash(Buffer.from(l, 'hex')));

/** RFC 9162 §2.1.4.2: both roots from a consistency proof (the first tree's root known), or null. */
function consistencyRoots(first: number, second: number, firstRoot: Buffer, proof: Buffer[]): [Buffer, Buffer] | null {
  if (proof.length === 0) return null;
  const path = (first & (first - 1)) === 0 ? [firstRoot, ...proof] : proof;
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn >>= 1;
    sn >>= 1;
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      fr = sha256(Buffer.of(1), c, fr);
      sr = sha256(Buffer.of(1), c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else sr = sha256(Buffer.of(1), sr, c);
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 ? [fr, sr] : null;
}

describe('The ledger’s Merkle tree (RFC 9162)', () => {
  it('gives Certificate Transparency’s roots for one to eight leaves, whole or grown by appending', () => {
    for (let n = 1; n <= 8; n++) {
      expect(hex(new MerkleRange(0, leaves.slice(0, n)).root())).toBe(ROOTS[n - 1]);
      let frontier: Buffer[] = [];
      for (let i = 0; i < n; i++) frontier = appendLeaves(i, frontier, [leaves[i]]);
      expect(hex(rootFromFrontier(frontier))).toBe(ROOTS[n - 1]);
    }
    expect(hex(rootFromFrontier([]))).toBe(hex(sha256()));
  });

  it('gives Certificate Transparency’s inclusion path of leaf 0 and consistency proof from 3 to 7', () => {
    const tree = new MerkleRange(0, leaves);
    expect(tree.inclusionPath(0, 8).map(hex)).toEqual([
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ]);
    expect(tree.consistencyProof(3, 7).map(hex)).toEqual([
      '0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7',
      '07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7',
      'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
      '837dbb152e9b079010717e84e865da4ebc0fa198a806d59d31bf15accef22d0e',
    ]);
  });

  it('proves every leaf and every pair of sizes up to 45 leaves, also after a purge kept only the subtrees', () => {
    const many = Array.from({ length: 45 }, (_, i) => leafHash(Buffer.from(`entry ${i}`)));
    const whole = new MerkleRange(0, many);
    for (let n = 1; n <= many.length; n++) {
      const root = whole.root(n);
      for (let m = 0; m < n; m++) expect(rootFromInclusionPath(m, n, many[m], whole.inclusionPath(m, n))).toEqual(root);
      for (let m = 1; m <= n; m++) {
        if (m === n) expect(whole.consistencyProof(m, n)).toEqual([]);
        else expect(consistencyRoots(m, n, whole.root(m), whole.consistencyProof(m, n))).toEqual([whole.root(m), root]);
      }
    }
    // 37 leaves purged: their frontier (32 + 4 + 1) is all a later proof needs.
    let start = 0;
    const retained = frontierSizes(37).map((size) => whole.hash(start, (start += size)));
    const purged = new MerkleRange(37, many.slice(37), retained);
    expect(purged.root()).toEqual(whole.root());
    for (let m = 37; m < 45; m++) expect(purged.inclusionPath(m)).toEqual(whole.inclusionPath(m));
    expect(purged.consistencyProof(40, 45)).toEqual(whole.consistencyProof(40, 45));
    expect(() => purged.inclusionPath(3)).toThrow(PurgedRangeError);
  });
});
