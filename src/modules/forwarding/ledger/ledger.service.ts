import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { ProblemException } from '../../../platform/problem/problem';
import { LedgerConsistencyResponse, LedgerHeadResponse, LedgerRecordProofResponse } from './dto/ledger.dto';
import type { LedgerHeadDocument } from './ledger-documents';
import { LedgerErrors } from './ledger.errors';
import { LedgerHeadEntity } from './ledger-head.entity';
import { MerkleRange, PurgedRangeError } from './merkle';
import { LedgerRepository } from './ledger.repository';

const bytes = (text: string) => Buffer.from(text, 'base64');
const b64 = (hash: Buffer) => hash.toString('base64');

/** The ledger's routes: its heads, a record's inclusion proofs, consistency between two heads (decision 0133). */
@Injectable()
export class LedgerService {
  constructor(
    private readonly ledger: LedgerRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  heads(keyset: KeysetRequest): Promise<LedgerHeadEntity[]> {
    return this.ledger.page(keyset);
  }

  /** Each entry of the record with its inclusion path to the latest head. */
  async recordProof(merchantAccountId: string, recordId: string): Promise<LedgerRecordProofResponse> {
    const entries = recordId.length <= 128 ? await this.ledger.entriesOfRecord(merchantAccountId, recordId) : [];
    if (entries.length === 0)
      throw new ProblemException(LedgerErrors.notInLedger, `No ledger entry for forward "${recordId.slice(0, 64)}".`);
    const head = await this.ledger.latestHead();
    if (!head || entries.some((entry) => entry.leaf_index === null || entry.leaf_index >= head.tree_size)) {
      const seconds = String(Math.ceil(this.config.ledger.sealIntervalMs / 1000));
      throw new ProblemException(
        LedgerErrors.notSealed,
        `Forward "${recordId.slice(0, 64)}" has entries no signed head covers yet; heads are signed every ${seconds} s.`,
        undefined,
        { 'retry-after': seconds },
      );
    }
    const tree = await this.tree(head);
    return {
      type: 'vault-forward-ledger-proof',
      head: LedgerHeadResponse.of(head),
      entries: entries.map((entry) => ({
        entry,
        inclusion_path: this.proved(() => tree.inclusionPath(entry.leaf_index!, head.tree_size)).map(b64),
      })),
    };
  }

  /** That the tree of head `from` is the start of the tree of head `to`. */
  async consistency(from: number, to: number): Promise<LedgerConsistencyResponse> {
    const [older, newer] = await Promise.all([this.head(from), this.head(to)]);
    if (older.seq > newer.seq || older.tree_size === 0)
      throw new ProblemException(
        LedgerErrors.headsOutOfOrder,
        `Head ${from} (${older.tree_size} entries) is not an older, non-empty head than head ${to}.`,
      );
    const tree = await this.tree(newer);
    return {
      type: 'vault-forward-ledger-consistency',
      from: LedgerHeadResponse.of(older),
      to: LedgerHeadResponse.of(newer),
      consistency_path: this.proved(() => tree.consistencyProof(older.tree_size, newer.tree_size)).map(b64),
    };
  }

  private async head(seq: number): Promise<LedgerHeadDocument> {
    const head = await this.ledger.headBySeq(seq);
    if (!head) throw new ProblemException(LedgerErrors.headNotFound, `No ledger head ${seq}.`);
    return head;
  }

  /**
   * The head's tree from the stored leaf hashes (the leaves the last purge kept, and its subtrees for those it
   * deleted). Reads one hash per entry: decision 0133 says when that needs stored interior nodes.
   */
  private async tree(head: LedgerHeadDocument): Promise<MerkleRange> {
    const leaves = await this.ledger.leafHashes(head.purged_below, head.tree_size);
    return new MerkleRange(
      head.purged_below,
      leaves.map((leaf) => bytes(leaf.leaf_hash)),
      head.retained.map(bytes),
    );
  }

  private proved(proof: () => Buffer[]): Buffer[] {
    try {
      return proof();
    } catch (error) {
      if (error instanceof PurgedRangeError)
        throw new ProblemException(LedgerErrors.purged, `The proof needs leaf ${error.leaf}, purged past retention.`);
      throw error;
    }
  }
}
