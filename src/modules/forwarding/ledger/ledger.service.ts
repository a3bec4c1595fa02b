import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { ProblemException } from '../../../platform/problem/problem';
import { LedgerConsistencyResponse, LedgerHeadResponse, LedgerRecordProofResponse } from './dto/ledger.dto';
import type { LedgerEntryDocument, LedgerHeadDocument } from './ledger-documents';
import { LedgerErrors } from './ledger.errors';
import { LedgerHeadEntity } from './ledger-head.entity';
import { MerkleRange, PurgedRangeError } from './merkle';
import { LedgerRepository } from './ledger.repository';

const bytes = (text: string) => Buffer.from(text, 'base64');
const b64 = (hash: Buffer) => hash.toString('base64');
const place = (n: number | null | undefined) => (n === null || n === undefined ? null : n);

/**
 * The ledger's routes (decisions 0133, 0143): a merchant sees its own tree only, the heads signed over its own
 * entries and the proofs in it; the shared tree, whose size counts every merchant's disclosures, is the operator's
 * and its auditor's (`ledger verify`, `ledger export`).
 */
@Injectable()
export class LedgerService {
  constructor(
    private readonly ledger: LedgerRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  heads(merchantAccountId: string, keyset: KeysetRequest): Promise<LedgerHeadEntity[]> {
    return this.ledger.page(merchantAccountId, keyset);
  }

  /** Each entry of the record with its inclusion path to the merchant's latest head. */
  async recordProof(merchantAccountId: string, recordId: string): Promise<LedgerRecordProofResponse> {
    const entries = recordId.length <= 128 ? await this.ledger.entriesOfRecord(merchantAccountId, recordId) : [];
    if (entries.length === 0)
      throw new ProblemException(LedgerErrors.notInLedger, `No ledger entry for forward "${recordId.slice(0, 64)}".`);
    const impossible = (n: number | null) => n !== null && !(Number.isSafeInteger(n) && n >= 0);
    if (entries.some((entry) => impossible(entry.leaf_index) || impossible(place(entry.merchant_leaf_index))))
      throw this.inconsistent();
    const head = await this.ledger.latestMerchantHead(merchantAccountId);
    const unsealed = (entry: LedgerEntryDocument) => {
      const at = place(entry.merchant_leaf_index);
      return at === null || !head || at >= head.tree_size;
    };
    if (!head || entries.some(unsealed)) {
      const seconds = String(Math.ceil(this.config.ledger.sealIntervalMs / 1000));
      throw new ProblemException(
        LedgerErrors.notSealed,
        `Forward "${recordId.slice(0, 64)}" has entries no signed head covers yet; heads are signed every ${seconds} s.`,
        undefined,
        { 'retry-after': seconds },
      );
    }
    const tree = await this.tree(merchantAccountId, head);
    return {
      type: 'vault-forward-ledger-proof',
      head: LedgerHeadResponse.of(head),
      entries: entries.map(({ merchant_leaf_index, ...entry }) => ({
        // The entry's place in the merchant's tree: the one its path leads through (its shared place is not told).
        entry: { ...entry, leaf_index: merchant_leaf_index! },
        inclusion_path: this.proved(() => tree.inclusionPath(merchant_leaf_index!, head.tree_size)).map(b64),
      })),
    };
  }

  /** That the merchant's tree at head `from` is the start of its tree at head `to`. */
  async consistency(merchantAccountId: string, from: number, to: number): Promise<LedgerConsistencyResponse> {
    const [older, newer] = await Promise.all([this.head(merchantAccountId, from), this.head(merchantAccountId, to)]);
    if (older.seq > newer.seq || older.tree_size === 0)
      throw new ProblemException(
        LedgerErrors.headsOutOfOrder,
        `Head ${from} (${older.tree_size} entries) is not an older, non-empty head than head ${to}.`,
      );
    const tree = await this.tree(merchantAccountId, newer);
    return {
      type: 'vault-forward-ledger-consistency',
      from: LedgerHeadResponse.of(older),
      to: LedgerHeadResponse.of(newer),
      consistency_path: this.proved(() => tree.consistencyProof(older.tree_size, newer.tree_size)).map(b64),
    };
  }

  private async head(merchantAccountId: string, seq: number): Promise<LedgerHeadDocument> {
    const head = await this.ledger.merchantHeadBySeq(merchantAccountId, seq);
    if (!head) throw new ProblemException(LedgerErrors.headNotFound, `No ledger head ${seq}.`);
    return head;
  }

  /**
   * The merchant's tree at the head, from the stored leaf hashes (the leaves the last purge kept, and its subtrees
   * for those it deleted). Every leaf must be there, each in its place: a proof is never made from a ledger with a
   * hole in it. Reads one hash per entry: decision 0133 says when that needs stored interior nodes.
   */
  private async tree(merchantAccountId: string, head: LedgerHeadDocument): Promise<MerkleRange> {
    const leaves = await this.ledger.merchantLeafHashes(merchantAccountId, head.purged_below, head.tree_size);
    const whole =
      leaves.length === head.tree_size - head.purged_below &&
      leaves.every((leaf, i) => leaf.index === head.purged_below + i && leaf.leaf_hash);
    if (!whole) throw this.inconsistent();
    try {
      return new MerkleRange(
        head.purged_below,
        leaves.map((leaf) => bytes(leaf.leaf_hash)),
        head.retained.map(bytes),
      );
    } catch {
      throw this.inconsistent();
    }
  }

  private proved(proof: () => Buffer[]): Buffer[] {
    try {
      return proof();
    } catch (error) {
      if (error instanceof PurgedRangeError)
        throw new ProblemException(LedgerErrors.purged, `The proof needs leaf ${error.leaf}, purged past retention.`);
      if (error instanceof RangeError) throw this.inconsistent();
      throw error;
    }
  }

  private inconsistent(): ProblemException {
    return new ProblemException(
      LedgerErrors.inconsistent,
      'The ledger’s stored entries do not agree with its signed heads; no proof can be made until an operator has ' +
        'run `ledger verify`.',
    );
  }
}
