import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { Clock, CLOCK } from '../../../platform/time/clock';
import { entryBytes, headBytes, headHash, LedgerHeadBody, LedgerHeadDocument } from './ledger-documents';
import { LedgerKey } from './ledger-key';
import { appendLeaves, frontierSizes, leafHash, MerkleRange, rootFromFrontier } from './merkle';
import { LedgerRepository } from './ledger.repository';

/** Entries one head covers at most: a backlog (after the ledger was off, or an outage) is sealed over several. */
const MAX_PER_SEAL = 10_000;
/** How often a process checks for entries past LEDGER_RETENTION. */
const PURGE_EVERY_MS = 60 * 60 * 1000;
const DAY_MS = 86_400_000;

const b64 = (bytes: Buffer) => bytes.toString('base64');
const bytes = (text: string) => Buffer.from(text, 'base64');

/**
 * Seals new ledger entries under signed tree heads every LEDGER_SEAL_INTERVAL, and purges entries past
 * LEDGER_RETENTION with a purge head (decision 0133). Every API and worker process runs it; the sealer's advisory
 * lock lets one seal at a time, so heads form one chain. Forwards never wait for it: they only insert entries.
 */
@Injectable()
export class LedgerSealer implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Ledger');
  private signingKey: LedgerKey | null = null;
  private timer: NodeJS.Timeout | undefined;
  private purgeTimer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly ledger: LedgerRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Made on first use: with the ledger off, no key is read, opened in the token or generated in DATA_DIR. */
  private get key(): LedgerKey {
    return (this.signingKey ??= LedgerKey.fromConfig(this.config));
  }

  onModuleInit(): void {
    if (!this.config.ledger.enabled) return;
    // At start-up, so that a wrong key (or token, or label) stops the process, not the first seal.
    void this.key;
    this.timer = setInterval(() => void this.tick(() => this.sealAll()), this.config.ledger.sealIntervalMs);
    this.timer.unref();
    this.purgeTimer = setInterval(() => void this.tick(() => this.purgeExpired()), PURGE_EVERY_MS);
    this.purgeTimer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.purgeTimer);
    await this.running;
  }

  /**
   * Seals every unsealed entry (several heads for a backlog), and appends the entries the shared tree covers to
   * their merchants' own trees under a head each (decision 0143); the last head of the shared tree written, or null.
   */
  async sealAll(): Promise<LedgerHeadDocument | null> {
    let last: LedgerHeadDocument | null = null;
    for (;;) {
      const sealed = await this.ledger.seal(
        MAX_PER_SEAL,
        (latest, entries) => {
          if (entries.length === 0) return null;
          const leaves = entries.map((entry) => leafHash(entryBytes(entry)));
          return { leafHashes: leaves.map(b64), head: this.appended(latest, leaves) };
        },
        (latest, entries) => {
          // Only what the sealer itself placed: a row put at a leaf by hand (its hash not its content's) is left out
          // of every merchant's tree, for `ledger verify` to report, never signed into one.
          const placed = entries.filter((entry) => entry.leaf_hash === b64(leafHash(entryBytes(entry))));
          return [...new Set(placed.map((entry) => entry.merchant_account_id))].map((merchant) => {
            const mine = placed.filter((entry) => entry.merchant_account_id === merchant);
            const head = this.appended(
              latest.get(merchant) ?? null,
              mine.map((entry) => bytes(entry.leaf_hash!)),
              merchant,
            );
            return { head, ids: mine.map((entry) => entry.id) };
          });
        },
      );
      if (sealed === 'busy') break;
      last = sealed.head ?? last;
      if (!sealed.more) break;
    }
    return last;
  }

  /**
   * Deletes the entries created before `cutoff` (LEDGER_RETENTION days ago by default) that lead the tree, and
   * writes a purge head keeping their subtrees' hashes (and one for each merchant's tree they leave): later proofs
   * and verification need no deleted entry.
   */
  async purgeExpired(cutoff = new Date(this.clock.epochMs() - this.config.ledger.retentionDays * DAY_MS)) {
    const head = await this.ledger.purge(cutoff, (latest, below, leafHashes) => {
      const range = new MerkleRange(latest.purged_below, leafHashes.map(bytes), latest.retained.map(bytes));
      let start = 0;
      const retained = frontierSizes(below).map((size) => {
        const hash = range.hash(start, start + size);
        start += size;
        return b64(hash);
      });
      return this.signed({
        ...latest,
        seq: latest.seq + 1,
        kind: 'purge',
        previous_hash: headHash(latest),
        purged_below: below,
        retained,
        signed_at: new Date(this.clock.epochMs()).toISOString(),
        key_id: this.key.keyId,
      });
    });
    if (head && head !== 'busy')
      this.logger.log({ msg: 'purged ledger entries past retention', purged_below: head.purged_below, seq: head.seq });
    return head === 'busy' ? null : head;
  }

  /** The next seal head of a tree (the shared one, or the merchant's) with `leaves` appended. */
  private appended(latest: LedgerHeadDocument | null, leaves: Buffer[], merchant?: string): LedgerHeadDocument {
    const size = latest?.tree_size ?? 0;
    const frontier = appendLeaves(size, (latest?.frontier ?? []).map(bytes), leaves);
    return this.signed({
      ...(merchant ? { merchant_account_id: merchant } : {}),
      seq: (latest?.seq ?? 0) + 1,
      kind: 'seal',
      tree_size: size + leaves.length,
      root_hash: b64(rootFromFrontier(frontier)),
      previous_hash: latest ? headHash(latest) : null,
      frontier: frontier.map(b64),
      purged_below: latest?.purged_below ?? 0,
      retained: latest?.retained ?? [],
      signed_at: new Date(this.clock.epochMs()).toISOString(),
      key_id: this.key.keyId,
    });
  }

  private signed(body: LedgerHeadBody): LedgerHeadDocument {
    const { seq, kind, tree_size, root_hash, previous_hash, frontier, purged_below, retained, signed_at, key_id } =
      body;
    const clean: LedgerHeadBody = {
      ...(body.merchant_account_id ? { merchant_account_id: body.merchant_account_id } : {}),
      seq,
      kind,
      tree_size,
      root_hash,
      previous_hash,
      frontier,
      purged_below,
      retained,
      signed_at,
      key_id,
    };
    return { ...clean, signature: this.key.sign(headBytes(clean)) };
  }

  /** One run at a time in this process; a failure (the database away) is logged and the next tick tries again. */
  private async tick(work: () => Promise<unknown>): Promise<void> {
    if (this.running) return;
    this.running = work()
      .catch((error: unknown) => this.logger.warn(`ledger sealing failed, will retry: ${(error as Error).message}`))
      .finally(() => (this.running = null));
    await this.running;
  }
}
