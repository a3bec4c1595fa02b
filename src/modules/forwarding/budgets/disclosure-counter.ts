/**
 * How disclosures are counted against the budgets, across every API process and worker (decision 0134):
 *
 *   DisclosureCounter.take(merchantAccountId, scopes, cards, nowMs): Promise<Refusal | null>
 *     Counts one disclosure of each card in every scope's current window, atomically: either all are counted,
 *     or none and the first scope that refuses is named. A card already disclosed in the window does not count
 *     against distinct_cards again; every disclosure counts against disclosures_per_card.
 *
 * Fixed windows aligned to their length (window start = floor(now / length) · length), so every process finds
 * the same window without talking to another. Two implementations: Redis (one Lua script) where REDIS_URL is
 * set, PostgreSQL (an advisory lock per scope and window) otherwise, or while Redis does not answer.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { REDIS, RedisClient } from '../../../platform/redis/redis';
import { withTimeout } from '../../../platform/time/with-timeout';
import { CountedScope, DisclosureCountsRepository, Refusal } from './disclosure-counts.repository';

/** The window of `windowMs` that holds `nowMs`. */
export function windowStart(nowMs: number, windowMs: number): number {
  return Math.floor(nowMs / windowMs) * windowMs;
}

/**
 * KEYS: one hash per scope (card id → disclosures in the window; HLEN is the distinct cards). ARGV: the number
 * of cards, then per scope its distinct-card limit, per-card limit (0: none) and the hash's TTL in ms, then the
 * card ids. Returns {0, 0} when counted, {scope index (1-based), 1 distinct | 2 per card} when refused.
 */
const TAKE_SCRIPT = `
local n = #KEYS
local m = tonumber(ARGV[1])
for i = 1, n do
  local distinct = tonumber(ARGV[1 + 3 * (i - 1) + 1])
  local perCard = tonumber(ARGV[1 + 3 * (i - 1) + 2])
  local fresh = 0
  for j = 1, m do
    local count = tonumber(redis.call('HGET', KEYS[i], ARGV[1 + 3 * n + j]) or '0')
    if count == 0 then fresh = fresh + 1 end
    if perCard > 0 and count + 1 > perCard then return {i, 2} end
  end
  if distinct > 0 and fresh > 0 and redis.call('HLEN', KEYS[i]) + fresh > distinct then return {i, 1} end
end
for i = 1, n do
  for j = 1, m do redis.call('HINCRBY', KEYS[i], ARGV[1 + 3 * n + j], 1) end
  redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[1 + 3 * (i - 1) + 3]))
end
return {0, 0}
`;

/** A count waits this long for Redis; then it is counted in PostgreSQL. */
const REDIS_TIMEOUT_MS = 500;

/** Counts in Redis: one script, so the check and the count are one step for every process. */
class RedisDisclosureCounter {
  constructor(private readonly redis: RedisClient) {}

  /** Whether the connection is up (a count is not queued behind a reconnection). */
  get ready(): boolean {
    return this.redis.status === 'ready';
  }

  async take(
    merchantAccountId: string,
    scopes: readonly CountedScope[],
    cards: readonly string[],
    nowMs: number,
  ): Promise<Refusal | null> {
    // One hash tag per merchant: every key of one count sits in one Cluster slot.
    const keys = scopes.map((s) => `vault-forward:disclosures:{${merchantAccountId}}:${s.scope}:${s.windowStartMs}`);
    const limits = scopes.flatMap((s) => [
      s.distinctCards ?? 0,
      s.perCard ?? 0,
      // Kept until its window has ended, and a minute more for clocks that differ between processes.
      s.windowStartMs + s.windowMs - nowMs + 60_000,
    ]);
    const answer = (await withTimeout(
      this.redis.eval(TAKE_SCRIPT, keys.length, ...keys, cards.length, ...limits, ...cards),
      REDIS_TIMEOUT_MS,
    )) as [number, number];
    if (answer[0] === 0) return null;
    return { index: answer[0] - 1, limit: answer[1] === 1 ? 'distinct_cards' : 'disclosures_per_card' };
  }
}

/** Redis where configured and answering, PostgreSQL otherwise. */
@Injectable()
export class DisclosureCounter {
  private readonly logger = new Logger('DisclosureBudgets');
  private readonly redis: RedisDisclosureCounter | null;

  constructor(
    private readonly postgres: DisclosureCountsRepository,
    @Inject(REDIS) redis: RedisClient | null,
  ) {
    this.redis = redis ? new RedisDisclosureCounter(redis) : null;
  }

  async take(
    merchantAccountId: string,
    scopes: readonly CountedScope[],
    cards: readonly string[],
    nowMs: number,
  ): Promise<Refusal | null> {
    if (this.redis?.ready) {
      try {
        return await this.redis.take(merchantAccountId, scopes, cards, nowMs);
      } catch (error) {
        // Counted in PostgreSQL meanwhile: a Redis outage splits a window's count in two (at most twice the budget).
        this.logger.warn({
          msg: 'disclosure count in Redis failed; counted in PostgreSQL',
          error: (error as Error).message,
        });
      }
    }
    return this.postgres.take(merchantAccountId, scopes, cards, nowMs);
  }
}
