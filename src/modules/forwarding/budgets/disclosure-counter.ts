/**
 * How disclosures are counted against the budgets, across every API process and worker (decisions 0134, 0142):
 *
 *   DisclosureCounter.take(merchantAccountId, scopes, cards, nowMs): Promise<Refusal | null>
 *     Counts one disclosure of each card (a fingerprint) in every scope's current window, atomically: either all
 *     are counted, or none and the first scope that refuses is named. A card already disclosed in the window does
 *     not count against distinct_cards again; every disclosure counts against disclosures_per_card.
 *   settled(): Promise<void>   once every count this process made in Redis is in PostgreSQL too
 *
 * Fixed windows aligned to their length (window start = floor(now / length) · length), so every process finds
 * the same window without talking to another. PostgreSQL holds the durable count of every window; Redis, where
 * configured and answering, is where the check is made (one script, one round trip). A window Redis does not hold
 * (a new one, or one it lost with its data) is seeded from the durable count first, so a Redis restart without its
 * data grants no fresh budget. While Redis does not answer, the check is made in PostgreSQL.
 */
import { createHash } from 'node:crypto';
import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { REDIS, RedisClient } from '../../../platform/redis/redis';
import { withTimeout } from '../../../platform/time/with-timeout';
import { CountedDisclosures, CountedScope, DisclosureCountsRepository, Refusal } from './disclosure-counts.repository';

/** The window of `windowMs` that holds `nowMs`. */
export function windowStart(nowMs: number, windowMs: number): number {
  return Math.floor(nowMs / windowMs) * windowMs;
}

/**
 * KEYS: one hash per scope (card fingerprint → disclosures in the window; its distinct cards are HLEN without the
 * `~seeded` field, which marks a window seeded from the durable count). ARGV: the number of cards; per scope its
 * distinct-card limit, per-card limit (0: none), the hash's TTL in ms and its seed's length (-1: none given); the
 * cards; then each given seed's (card, disclosures) pairs. A hash that is missing and has no seed given is not
 * counted: {-1, its scope indexes (1-based)…} asks for seeds. A seed is written only where the hash is still
 * missing (another process may have seeded it meanwhile). Returns {0, 0} when counted, {scope index, 1 distinct |
 * 2 per card} when refused.
 */
const TAKE_SCRIPT = `
local n = #KEYS
local m = tonumber(ARGV[1])
local SEEDED = '~seeded'
local function arg(i, k) return tonumber(ARGV[1 + 4 * (i - 1) + k]) end
local missing = {-1}
for i = 1, n do
  if arg(i, 4) < 0 and redis.call('EXISTS', KEYS[i]) == 0 then missing[#missing + 1] = i end
end
if #missing > 1 then return missing end
local at = 1 + 4 * n + m
for i = 1, n do
  local seeds = arg(i, 4)
  if seeds >= 0 then
    if redis.call('EXISTS', KEYS[i]) == 0 then
      redis.call('HSET', KEYS[i], SEEDED, 1)
      for j = 1, seeds do redis.call('HSET', KEYS[i], ARGV[at + 2 * j - 1], ARGV[at + 2 * j]) end
      redis.call('PEXPIRE', KEYS[i], arg(i, 3))
    end
    at = at + 2 * seeds
  end
end
for i = 1, n do
  local distinct = arg(i, 1)
  local perCard = arg(i, 2)
  local fresh = 0
  for j = 1, m do
    local count = tonumber(redis.call('HGET', KEYS[i], ARGV[1 + 4 * n + j]) or '0')
    if count == 0 then fresh = fresh + 1 end
    if perCard > 0 and count + 1 > perCard then return {i, 2} end
  end
  local known = redis.call('HLEN', KEYS[i]) - redis.call('HEXISTS', KEYS[i], SEEDED)
  if distinct > 0 and fresh > 0 and known + fresh > distinct then return {i, 1} end
end
for i = 1, n do
  for j = 1, m do redis.call('HINCRBY', KEYS[i], ARGV[1 + 4 * n + j], 1) end
  redis.call('PEXPIRE', KEYS[i], arg(i, 3))
end
return {0, 0}
`;

/** The script's SHA1: a count sends these 40 characters, not the script (EVALSHA; decision 0157). */
const TAKE_SCRIPT_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex');

/** A count waits this long for Redis; then it is counted in PostgreSQL. */
const REDIS_TIMEOUT_MS = 500;

/** A seed waits this long for PostgreSQL (a forward waits on it); then the window is counted from what is known. */
const SEED_TIMEOUT_MS = 2_000;

/** A process going away waits this long for its counts to reach PostgreSQL. */
const SHUTDOWN_WAIT_MS = 5_000;

/** How many scopes' seeds one count may ask for in turn (a key lost between two runs of the script). */
const SEED_ROUNDS = 3;

/** Counts this process keeps for PostgreSQL while it is away; past that the newest are not kept. */
const MAX_PENDING = 100_000;

/**
 * How long a count waits for others before it is written (when no write is in flight): the write is not on the
 * forward's path, and without the wait every forward at low load would commit its count beside its disclosure,
 * two commits before its send instead of one (decision 0157).
 */
const WRITE_AFTER_MS = 50;

/** A window's hash in Redis. One hash tag per merchant: every key of one count sits in one Cluster slot. */
function redisKey(merchantAccountId: string, s: CountedScope): string {
  return `vault-forward:card-disclosures:{${merchantAccountId}}:${s.scope}:${s.windowStartMs}`;
}

/**
 * The counts made in Redis, added to PostgreSQL after the forward (never before its send): one statement at a
 * time per process, started WRITE_AFTER_MS after the first count it carries and carrying every count made
 * meanwhile and while the previous one ran, so the write keeps pace with any load.
 */
class DurableCounts {
  private readonly logger = new Logger('DisclosureBudgets');
  private pending = new Map<string, CountedDisclosures>();
  /** The batch being written: not yet in PostgreSQL for a reader. */
  private writing: readonly CountedDisclosures[] = [];
  private flushing: Promise<void> | null = null;
  /** The write to come (WRITE_AFTER_MS), when none is in flight. */
  private timer: NodeJS.Timeout | null = null;
  private failing = false;
  /** The merchants' windows this process has counted in; a new one prunes that merchant's ended windows. */
  private readonly windows = new LRUCache<string, true>({ max: 10_000 });

  constructor(private readonly rows: DisclosureCountsRepository) {}

  add(merchantAccountId: string, scopes: readonly CountedScope[], cards: readonly string[]): void {
    for (const s of scopes) {
      for (const card of cards) {
        const key = `${merchantAccountId}\n${s.scope}\n${s.windowStartMs}\n${card}`;
        const counted = this.pending.get(key);
        if (counted) counted.disclosures++;
        else if (this.pending.size < MAX_PENDING)
          this.pending.set(key, {
            merchantAccountId,
            scope: s.scope,
            windowStartMs: s.windowStartMs,
            windowEndMs: s.windowStartMs + s.windowMs,
            card,
            disclosures: 1,
          });
      }
    }
    this.writeSoon();
  }

  private writeSoon(): void {
    if (this.flushing || this.timer) return;
    this.timer = setTimeout(() => this.write(), WRITE_AFTER_MS);
  }

  private write(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flushing ??= this.flush().finally(() => (this.flushing = null));
  }

  /**
   * What this process counted in one window and has not yet written: part of the window's durable count. A batch
   * committing meanwhile may be read twice, which errs on the side of refusing.
   */
  unwritten(merchantAccountId: string, s: CountedScope): CountedDisclosures[] {
    return [...this.writing, ...this.pending.values()].filter(
      (c) => c.merchantAccountId === merchantAccountId && c.scope === s.scope && c.windowStartMs === s.windowStartMs,
    );
  }

  /** Once what is pending was written, or tried once more. */
  async settled(): Promise<void> {
    if (this.pending.size > 0) this.write();
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = [...this.pending.values()];
      this.pending = new Map();
      this.writing = batch;
      // Per merchant, the start of a window new to this process: what had ended by then goes.
      const pruned = new Map<string, number>();
      for (const c of batch) {
        const window = `${c.merchantAccountId}\n${c.scope}\n${c.windowStartMs}`;
        if (!this.windows.has(window))
          pruned.set(c.merchantAccountId, Math.max(pruned.get(c.merchantAccountId) ?? 0, c.windowStartMs));
        this.windows.set(window, true);
      }
      try {
        await this.rows.add(batch, pruned);
        this.writing = [];
        if (this.failing) this.logger.log({ msg: 'disclosure counts written to PostgreSQL again' });
        this.failing = false;
      } catch (error) {
        this.writing = [];
        // Kept for the next count's write: Redis still holds them meanwhile.
        for (const c of batch) {
          const key = `${c.merchantAccountId}\n${c.scope}\n${c.windowStartMs}\n${c.card}`;
          const later = this.pending.get(key);
          if (later) later.disclosures += c.disclosures;
          else if (this.pending.size < MAX_PENDING) this.pending.set(key, c);
        }
        if (!this.failing)
          this.logger.warn({
            msg: 'disclosure counts not written to PostgreSQL; kept in memory until it answers',
            error: (error as Error).message,
          });
        this.failing = true;
        break;
      }
    }
  }
}

/** Counts in Redis: one script, so the check and the count are one step for every process. */
class RedisDisclosureCounter {
  constructor(private readonly redis: RedisClient) {}

  /** Whether the connection is up (a count is not queued behind a reconnection). */
  get ready(): boolean {
    return this.redis.status === 'ready';
  }

  /** Forgets windows (counted in PostgreSQL meanwhile): their next count seeds them from there. */
  async forget(keys: readonly string[]): Promise<void> {
    // One key a command: the keys of different merchants sit in different Cluster slots.
    await withTimeout(Promise.all(keys.map((key) => this.redis.unlink(key))), REDIS_TIMEOUT_MS);
  }

  async take(
    merchantAccountId: string,
    scopes: readonly CountedScope[],
    cards: readonly string[],
    nowMs: number,
    seedOf: (scope: CountedScope) => Promise<Map<string, number>>,
  ): Promise<Refusal | null> {
    const keys = scopes.map((s) => redisKey(merchantAccountId, s));
    const seeds = new Map<number, Map<string, number>>();
    for (let round = 0; round < SEED_ROUNDS; round++) {
      const limits = scopes.flatMap((s, i) => [
        s.distinctCards ?? 0,
        s.perCard ?? 0,
        // Kept until its window has ended, and a minute more for clocks that differ between processes.
        s.windowStartMs + s.windowMs - nowMs + 60_000,
        seeds.get(i)?.size ?? -1,
      ]);
      const seeded = scopes.flatMap((_, i) => [...(seeds.get(i) ?? [])].flat());
      const answer = (await withTimeout(
        this.script(keys.length, [...keys, cards.length, ...limits, ...cards, ...seeded]),
        REDIS_TIMEOUT_MS,
      )) as number[];
      if (answer[0] === 0) return null;
      if (answer[0] > 0)
        return { index: answer[0] - 1, limit: answer[1] === 1 ? 'distinct_cards' : 'disclosures_per_card' };
      for (const missing of answer.slice(1)) seeds.set(missing - 1, await seedOf(scopes[missing - 1]));
    }
    throw new Error('a disclosure window kept going missing from Redis while it was seeded');
  }

  /** The script by its SHA1; a server that does not hold it yet (new, restarted, flushed) gets it whole once. */
  private async script(keys: number, args: Array<string | number>): Promise<unknown> {
    try {
      return await this.redis.evalsha(TAKE_SCRIPT_SHA, keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.redis.eval(TAKE_SCRIPT, keys, ...args);
    }
  }
}

/** Redis where configured and answering, PostgreSQL otherwise; PostgreSQL's count is kept whole either way. */
@Injectable()
export class DisclosureCounter implements BeforeApplicationShutdown {
  private readonly logger = new Logger('DisclosureBudgets');
  private readonly redis: RedisDisclosureCounter | null;
  private readonly durable: DurableCounts;
  /** Redis windows this process counted in PostgreSQL while Redis did not answer: stale in Redis. */
  private readonly stale = new Set<string>();

  constructor(
    private readonly postgres: DisclosureCountsRepository,
    @Inject(REDIS) redis: RedisClient | null,
  ) {
    this.redis = redis ? new RedisDisclosureCounter(redis) : null;
    this.durable = new DurableCounts(postgres);
  }

  async take(
    merchantAccountId: string,
    scopes: readonly CountedScope[],
    cards: readonly string[],
    nowMs: number,
  ): Promise<Refusal | null> {
    if (this.redis?.ready) {
      try {
        if (this.stale.size > 0) {
          const stale = [...this.stale];
          await this.redis.forget(stale);
          for (const key of stale) this.stale.delete(key);
        }
        const refusal = await this.redis.take(merchantAccountId, scopes, cards, nowMs, (s) =>
          this.seed(merchantAccountId, s),
        );
        if (!refusal) this.durable.add(merchantAccountId, scopes, cards);
        return refusal;
      } catch (error) {
        // Counted in PostgreSQL meanwhile, against the whole count; Redis drops these windows once it answers.
        this.logger.warn({
          msg: 'disclosure count in Redis failed; counted in PostgreSQL',
          error: (error as Error).message,
        });
      }
    }
    const refusal = await this.postgres.take(merchantAccountId, scopes, cards, nowMs);
    if (this.redis && !refusal) for (const s of scopes) this.stale.add(redisKey(merchantAccountId, s));
    return refusal;
  }

  /**
   * A window's durable count, with what this process has not yet written. PostgreSQL away as well: an empty seed
   * (exact for a new window; for one Redis lost, the budget starts again, the one case left of decision 0142).
   */
  private async seed(merchantAccountId: string, s: CountedScope): Promise<Map<string, number>> {
    let counts: Map<string, number>;
    try {
      counts = await withTimeout(this.postgres.window(merchantAccountId, s.scope, s.windowStartMs), SEED_TIMEOUT_MS);
    } catch (error) {
      this.logger.warn({
        msg: 'disclosure window not read from PostgreSQL; Redis counts it from nothing',
        error: (error as Error).message,
      });
      counts = new Map();
    }
    for (const c of this.durable.unwritten(merchantAccountId, s))
      counts.set(c.card, (counts.get(c.card) ?? 0) + c.disclosures);
    return counts;
  }

  settled(): Promise<void> {
    return this.durable.settled();
  }

  /** The counts made in Redis reach PostgreSQL before the process goes (unless PostgreSQL does not answer). */
  async beforeApplicationShutdown(): Promise<void> {
    await withTimeout(this.settled(), SHUTDOWN_WAIT_MS).catch((error: unknown) =>
      this.logger.warn({ msg: 'disclosure counts not all written to PostgreSQL', error: (error as Error).message }),
    );
  }
}
