/**
 * Disclosure budgets (decision 0134): how many distinct cards a merchant account, or one of its configs, may
 * disclose per window, how often one card may be disclosed per window, and which placeholders a config may fill.
 *
 *   checkPlaceholders(merchantAccountId, configId, located): Promise<void>
 *     400 placeholder-not-allowed naming the first placeholder the config's allow-list leaves out.
 *   take(forward): Promise<void>
 *     Counts the forward's cards against the merchant's and its config's budgets (DisclosureCounter), or
 *     throws 429 disclosure-budget-exceeded with Retry-After (the seconds to the window's end), counts the
 *     refusal in the metrics and announces it once per budget and window with a signed webhook event.
 *   get / put / remove: the budgets as the routes read and set them.
 */
import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { LRUCache } from 'lru-cache';
import { Metrics } from '../../../platform/metrics/metrics.service';
import { ProblemException, ProblemLocation } from '../../../platform/problem/problem';
import { SharedCache, SharedCaches } from '../../../platform/redis/shared-cache';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { orEmptyString, PlaceholderUse } from '../../vault/placeholders/placeholders';
import { VaultForwardConfigsService } from '../../forwarding-setup/configs/vault-forward-configs.service';
import { DisclosureCounter, windowStart } from './disclosure-counter';
import type { CountedScope } from './disclosure-counts.repository';
import { DisclosureBudgetErrors } from './disclosure-budgets.errors';
import { DisclosureBudgetRow, DisclosureBudgetsRepository } from './disclosure-budgets.repository';

/**
 * The defaults where a merchant set nothing (the reasoning is in decision 0134 and docs/forwarding.md): one card
 * is disclosed a few times in a purchase's life (authorisation, capture, refund, a retried step), so 60 in an
 * hour is far beyond an honest merchant and far below a loop; 50,000 distinct cards in an hour is more than
 * all but the largest merchants see at their peak, and a small share of a vault a stolen key would drain.
 */
export const DEFAULT_WINDOW_SECONDS = 3_600;
export const DEFAULT_DISTINCT_CARDS = 50_000;
export const DEFAULT_DISCLOSURES_PER_CARD = 60;

const MERCHANT_SCOPE = 'merchant';

/** Where a refusal is announced: the callbacks' delivery (CallbackDeliveries), provided by the queued side. */
interface DisclosureBudgetEvents {
  deliver(merchantAccountId: string, url: string, body: unknown, options: { messageId?: string }): Promise<string>;
}
export const DISCLOSURE_BUDGET_EVENTS = Symbol('DISCLOSURE_BUDGET_EVENTS');

/** What a forward discloses, as the budgets count it. */
interface CountedForward {
  id: string;
  merchantAccountId: string;
  configId: string;
  /**
   * Where the cards counted come from: their fingerprints (decision 0142), whatever carried them, so two carriers of
   * one card are one card; never a number.
   */
  cards: { fingerprints(merchantAccountId: string): Promise<readonly string[]> };
}

/** The placeholders of a forward's templates: its body's and each x-vault-forward-header-NAME's. */
interface TemplateScans {
  body: { uses: readonly PlaceholderUse[] } | undefined;
  /** One per header template, in the same order. */
  headers: ReadonlyArray<{ uses: readonly PlaceholderUse[] }>;
}

/** The header name a problem names for a forwarded header (forward-headers.ts's prefix, which sits above). */
const HEADER_PREFIX = 'x-vault-forward-header-';

type Budgets = ReadonlyMap<string, DisclosureBudgetRow>;

/** How long a process keeps a merchant's budgets (a change drops them in every process once its notice arrives). */
const CACHE_TTL_MS = 10_000;

@Injectable()
export class DisclosureBudgetsService {
  private readonly logger = new Logger('DisclosureBudgets');
  private readonly cache: SharedCache<Budgets>;
  /** Reads of a merchant's budgets in flight: the callers of one moment share one statement. */
  private readonly reading = new Map<string, Promise<Budgets>>();
  /** Events this process has handed to the delivery already (each is delivered once anyway: its webhook-id). */
  private readonly announced = new LRUCache<string, true>({ max: 10_000 });

  constructor(
    private readonly rows: DisclosureBudgetsRepository,
    private readonly counter: DisclosureCounter,
    private readonly configs: VaultForwardConfigsService,
    private readonly metrics: Metrics,
    private readonly moduleRef: ModuleRef,
    @Inject(CLOCK) private readonly clock: Clock,
    caches: SharedCaches,
  ) {
    this.cache = caches.create('disclosure-budgets', { max: 10_000, ttlMs: CACHE_TTL_MS });
  }

  private budgets(merchantAccountId: string): Promise<Budgets> {
    const cached = this.cache.get(merchantAccountId);
    if (cached) return Promise.resolve(cached);
    let read = this.reading.get(merchantAccountId);
    if (!read) {
      const snapshot = this.cache.snapshot();
      read = this.rows
        .ofMerchant(merchantAccountId)
        .then((rows) => {
          const budgets: Budgets = new Map(rows.map((row) => [row.scope, row]));
          this.cache.set(merchantAccountId, budgets, snapshot);
          return budgets;
        })
        .finally(() => this.reading.delete(merchantAccountId));
      this.reading.set(merchantAccountId, read);
    }
    return read;
  }

  /**
   * Starts reading a merchant's budgets, when they are not in the cache, beside planning's other reads (decision
   * 0157); checkPlaceholders and take then share the read, and a failure surfaces there.
   */
  prefetch(merchantAccountId: string): void {
    this.budgets(merchantAccountId).catch(() => undefined);
  }

  async checkPlaceholders(
    forward: { merchantAccountId: string; headerTemplates: ReadonlyArray<readonly [string, string]> },
    configId: string,
    scans: TemplateScans,
  ): Promise<void> {
    const allowed = (await this.budgets(forward.merchantAccountId)).get(configId)?.allowed_placeholders;
    if (!allowed) return;
    const names = new Set(allowed);
    const located: Array<[ProblemLocation, string, readonly PlaceholderUse[]]> = scans.body
      ? [['body', 'body', scans.body.uses]]
      : [];
    scans.headers.forEach((scan, i) =>
      located.push(['header', `${HEADER_PREFIX}${forward.headerTemplates[i][0]}`, scan.uses]),
    );
    for (const [location, name, uses] of located) {
      for (const use of uses) {
        if (names.has(use.name) || names.has(orEmptyString(use.name).base)) continue;
        throw new ProblemException(
          DisclosureBudgetErrors.placeholderNotAllowed,
          `The config ${configId} may not fill {{ ${use.token} }}; it may fill ${allowed.join(', ') || 'no placeholder'}. ` +
            'Nothing was sent.',
          [{ location, name, message: `{{ ${use.token} }} is not allowed by the config` }],
        );
      }
    }
  }

  async take(forward: CountedForward): Promise<void> {
    // One card listed twice (two payment methods of it) is one disclosure of it.
    const cards = [...new Set(await forward.cards.fingerprints(forward.merchantAccountId))];
    if (cards.length === 0) return;
    const budgets = await this.budgets(forward.merchantAccountId);
    const nowMs = this.clock.epochMs();
    const scopes: CountedScope[] = [];
    const merchant = budgets.get(MERCHANT_SCOPE);
    const merchantWindowMs = (merchant?.window_seconds ?? DEFAULT_WINDOW_SECONDS) * 1000;
    scopes.push({
      scope: MERCHANT_SCOPE,
      windowMs: merchantWindowMs,
      windowStartMs: windowStart(nowMs, merchantWindowMs),
      distinctCards: merchant?.distinct_cards ?? DEFAULT_DISTINCT_CARDS,
      perCard: merchant?.disclosures_per_card ?? DEFAULT_DISCLOSURES_PER_CARD,
    });
    const config = budgets.get(forward.configId);
    if (config && (config.distinct_cards !== null || config.disclosures_per_card !== null)) {
      const windowMs = config.window_seconds * 1000;
      scopes.push({
        scope: forward.configId,
        windowMs,
        windowStartMs: windowStart(nowMs, windowMs),
        distinctCards: config.distinct_cards,
        perCard: config.disclosures_per_card,
      });
    }
    const refusal = await this.counter.take(forward.merchantAccountId, scopes, cards, nowMs);
    if (!refusal) return;
    const refused = scopes[refusal.index];
    const scopeKind = refused.scope === MERCHANT_SCOPE ? 'merchant' : 'config';
    this.metrics.disclosureBudgetRefused(scopeKind, refusal.limit);
    const windowEndMs = refused.windowStartMs + refused.windowMs;
    const retryAfter = Math.max(1, Math.ceil((windowEndMs - nowMs) / 1000));
    const limitValue = refusal.limit === 'distinct_cards' ? refused.distinctCards : refused.perCard;
    this.announce(forward, merchant?.webhook_url ?? null, {
      scope: scopeKind,
      configId: scopeKind === 'config' ? refused.scope : null,
      limit: refusal.limit,
      limitValue: limitValue!,
      windowStartMs: refused.windowStartMs,
      windowEndMs,
    });
    const what =
      refusal.limit === 'distinct_cards'
        ? `more than ${limitValue} distinct cards`
        : `one of its cards more than ${limitValue} times`;
    throw new ProblemException(
      DisclosureBudgetErrors.exceeded,
      `This forward would disclose ${what} in the current ${refused.windowMs / 1000}-second window of the ` +
        `${scopeKind === 'merchant' ? 'merchant account’s' : `config ${refused.scope}’s`} disclosure budget. ` +
        `Nothing was sent; the window ends in ${retryAfter} seconds.`,
      undefined,
      { 'retry-after': String(retryAfter) },
    );
  }

  /**
   * The signed `disclosure_budget.exceeded` event, once per budget and window: its webhook-id is derived from
   * them, so the delivery keeps one however many processes refuse. Not awaited: the refusal does not wait for it.
   */
  private announce(
    forward: CountedForward,
    url: string | null,
    event: {
      scope: 'merchant' | 'config';
      configId: string | null;
      limit: string;
      limitValue: number;
      windowStartMs: number;
      windowEndMs: number;
    },
  ): void {
    if (!url) return;
    const key = `${forward.merchantAccountId}:${event.scope}:${event.configId ?? ''}:${event.windowStartMs}`;
    if (this.announced.has(key)) return;
    const events = this.events();
    if (!events) return;
    this.announced.set(key, true);
    const messageId = `budget_${createHash('sha256').update(key).digest('hex').slice(0, 48)}`;
    const body = {
      type: 'disclosure_budget.exceeded',
      id: messageId,
      merchant_account_id: forward.merchantAccountId,
      scope: event.scope,
      config_id: event.configId,
      limit: event.limit,
      limit_value: event.limitValue,
      window_start: new Date(event.windowStartMs).toISOString(),
      window_end: new Date(event.windowEndMs).toISOString(),
      // The first refused forward of the window; the others are in the records (status 429).
      forward_id: forward.id,
      forward_config_id: forward.configId,
    };
    events.deliver(forward.merchantAccountId, url, body, { messageId }).catch((error: unknown) => {
      this.announced.delete(key);
      this.logger.warn({ msg: 'disclosure budget event not stored', error: (error as Error).message });
    });
  }

  /** The delivery, where the process has one (the queued side provides it; without a queue, no event). */
  private events(): DisclosureBudgetEvents | null {
    try {
      return this.moduleRef.get<DisclosureBudgetEvents>(DISCLOSURE_BUDGET_EVENTS, { strict: false });
    } catch {
      return null;
    }
  }

  /** A budget as stored, or null (then the defaults apply). A config's must be of the merchant. */
  async get(merchantAccountId: string, configId: string | null): Promise<DisclosureBudgetRow | null> {
    if (configId !== null) await this.configs.get(merchantAccountId, configId);
    return (await this.budgets(merchantAccountId)).get(configId ?? MERCHANT_SCOPE) ?? null;
  }

  async put(merchantAccountId: string, row: Omit<DisclosureBudgetRow, 'scope'>): Promise<DisclosureBudgetRow> {
    if (row.config_id !== null) await this.configs.get(merchantAccountId, row.config_id);
    const stored = await this.rows.put(merchantAccountId, { ...row, scope: row.config_id ?? MERCHANT_SCOPE });
    this.reading.delete(merchantAccountId);
    await this.cache.invalidate(merchantAccountId);
    return stored;
  }

  async remove(merchantAccountId: string, configId: string | null): Promise<void> {
    if (configId !== null) await this.configs.get(merchantAccountId, configId);
    await this.rows.remove(merchantAccountId, configId ?? MERCHANT_SCOPE);
    this.reading.delete(merchantAccountId);
    await this.cache.invalidate(merchantAccountId);
  }
}
