import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** One budget to count against, in its current window. Null limits are not checked. */
export interface CountedScope {
  /** 'merchant', or a config's id. */
  scope: string;
  windowMs: number;
  windowStartMs: number;
  distinctCards: number | null;
  perCard: number | null;
}

export interface Refusal {
  /** Index in `scopes` of the budget that refused. */
  index: number;
  limit: 'distinct_cards' | 'disclosures_per_card';
}

/** Disclosures of one card in one scope's window, to be added to the durable count. */
export interface CountedDisclosures {
  merchantAccountId: string;
  scope: string;
  windowStartMs: number;
  windowEndMs: number;
  /** The card's fingerprint (decision 0142). */
  card: string;
  disclosures: number;
}

/**
 * Every read and write of vault_forward_disclosure_counts, the durable count of every disclosure per card
 * fingerprint and window (decisions 0134, 0142): counted here directly where no Redis answers, added after the
 * Redis count otherwise, and read to seed a window Redis does not hold. A count here takes a transaction-level
 * advisory lock per (merchant, scope, window), in the order given (merchant-wide first), so two processes
 * counting the same window wait for each other.
 */
@Injectable()
export class DisclosureCountsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Counts one disclosure of each of `cards` in every scope, unless one scope refuses: then nothing is counted
   * and the refusal says which scope and limit. Ended windows of the merchant are removed on the way.
   */
  take(merchantAccountId: string, scopes: readonly CountedScope[], cards: readonly string[], nowMs: number) {
    return this.dataSource.transaction(async (manager): Promise<Refusal | null> => {
      for (const s of scopes) {
        await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 1340))`, [
          `disclosure-budget:${merchantAccountId}:${s.scope}:${s.windowStartMs}`,
        ]);
      }
      await manager.query(
        `DELETE FROM vault_forward_disclosure_counts WHERE merchant_account_id = $1 AND window_end <= $2`,
        [merchantAccountId, nowMs],
      );
      for (const [index, s] of scopes.entries()) {
        const [row] = await manager.query<Array<{ cards: number; known: number; most: number }>>(
          `SELECT count(*)::int AS cards,
                  (count(*) FILTER (WHERE card_fingerprint = ANY($4::text[])))::int AS known,
                  coalesce(max(disclosures) FILTER (WHERE card_fingerprint = ANY($4::text[])), 0)::int AS most
             FROM vault_forward_disclosure_counts
            WHERE merchant_account_id = $1 AND scope = $2 AND window_start = $3`,
          [merchantAccountId, s.scope, s.windowStartMs, cards],
        );
        if (s.perCard !== null && row.most + 1 > s.perCard) return { index, limit: 'disclosures_per_card' };
        const fresh = cards.length - row.known;
        if (s.distinctCards !== null && fresh > 0 && row.cards + fresh > s.distinctCards)
          return { index, limit: 'distinct_cards' };
      }
      for (const s of scopes) {
        await manager.query(
          `INSERT INTO vault_forward_disclosure_counts
             (merchant_account_id, scope, window_start, window_end, card_fingerprint, disclosures)
           SELECT $1, $2, $3, $4, card, 1 FROM unnest($5::text[]) AS card
           ON CONFLICT (merchant_account_id, scope, window_start, card_fingerprint)
           DO UPDATE SET disclosures = vault_forward_disclosure_counts.disclosures + 1`,
          [merchantAccountId, s.scope, s.windowStartMs, s.windowStartMs + s.windowMs, cards],
        );
      }
      return null;
    });
  }

  /**
   * Adds counts Redis made (one statement, no lock: each row only grows). Each merchant of `pruned` loses, in the
   * same statement, the windows that had ended when the given one began.
   */
  async add(counts: readonly CountedDisclosures[], pruned: ReadonlyMap<string, number>): Promise<void> {
    await this.dataSource.query(
      `WITH pruned AS (
         DELETE FROM vault_forward_disclosure_counts c USING unnest($7::text[], $8::bigint[]) AS p (merchant, began)
          WHERE c.merchant_account_id = p.merchant AND c.window_end <= p.began
       )
       INSERT INTO vault_forward_disclosure_counts
         (merchant_account_id, scope, window_start, window_end, card_fingerprint, disclosures)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::int[])
                  AS c (merchant_account_id, scope, window_start, window_end, card_fingerprint, disclosures)
        -- Never a row the DELETE takes: those windows had ended before one these counts are in began.
        WHERE NOT EXISTS (SELECT 1 FROM unnest($7::text[], $8::bigint[]) AS p (merchant, began)
                           WHERE p.merchant = c.merchant_account_id AND c.window_end <= p.began)
       ON CONFLICT (merchant_account_id, scope, window_start, card_fingerprint)
       DO UPDATE SET disclosures = vault_forward_disclosure_counts.disclosures + EXCLUDED.disclosures`,
      [
        counts.map((c) => c.merchantAccountId),
        counts.map((c) => c.scope),
        counts.map((c) => c.windowStartMs),
        counts.map((c) => c.windowEndMs),
        counts.map((c) => c.card),
        counts.map((c) => c.disclosures),
        [...pruned.keys()],
        [...pruned.values()],
      ],
    );
  }

  /** One window's count: each card's disclosures in it. */
  async window(merchantAccountId: string, scope: string, windowStartMs: number): Promise<Map<string, number>> {
    const rows = await this.dataSource.query<Array<{ card_fingerprint: string; disclosures: number }>>(
      `SELECT card_fingerprint, disclosures FROM vault_forward_disclosure_counts
        WHERE merchant_account_id = $1 AND scope = $2 AND window_start = $3`,
      [merchantAccountId, scope, windowStartMs],
    );
    return new Map(rows.map((row) => [row.card_fingerprint, row.disclosures]));
  }
}
