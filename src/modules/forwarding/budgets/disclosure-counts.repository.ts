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

/**
 * Every read and write of vault_forward_disclosure_counts: the disclosure counts where no Redis is configured
 * (decision 0134). One transaction per forward: a transaction-level advisory lock per (merchant, scope, window),
 * taken in the order given (merchant-wide first), so two processes counting the same window wait for each other.
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
                  (count(*) FILTER (WHERE payment_method_id = ANY($4::text[])))::int AS known,
                  coalesce(max(disclosures) FILTER (WHERE payment_method_id = ANY($4::text[])), 0)::int AS most
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
             (merchant_account_id, scope, window_start, window_end, payment_method_id, disclosures)
           SELECT $1, $2, $3, $4, card, 1 FROM unnest($5::text[]) AS card
           ON CONFLICT (merchant_account_id, scope, window_start, payment_method_id)
           DO UPDATE SET disclosures = vault_forward_disclosure_counts.disclosures + 1`,
          [merchantAccountId, s.scope, s.windowStartMs, s.windowStartMs + s.windowMs, cards],
        );
      }
      return null;
    });
  }
}
