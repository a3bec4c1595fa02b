import { Injectable } from '@nestjs/common';
import { webOrigin } from '../../../platform/config/web-origin';
import { SharedCache, SharedCaches } from '../../../platform/redis/shared-cache';
import { MerchantAccountsRepository } from './merchant-accounts.repository';

/** The most origins one merchant account may list. */
export const MAX_SECURE_FIELDS_ORIGINS = 20;

/**
 * How long a process trusts its answer to "who lists this origin" when no invalidation reaches it (Redis away):
 * a change made in another process is announced and applies at once otherwise.
 */
const LISTING_CACHE_TTL_MS = 30_000;

/** Why a `secure_fields_origins` value is refused, or null (the DTO's rule; never repeats a value). */
export function secureFieldsOriginsProblem(value: unknown): string | null {
  if (!Array.isArray(value)) return 'must be an array of origins';
  for (const [index, item] of value.entries()) {
    if (typeof item !== 'string') return `item ${index} must be a string`;
    const check = webOrigin(item.trim());
    if ('problem' in check) return `item ${index} ${check.problem}`;
  }
  return null;
}

/** The list as stored: each normalised, duplicates dropped, order kept. Call after the DTO's rule passed. */
export function normaliseSecureFieldsOrigins(value: readonly string[]): string[] {
  const origins = value.map((item) => {
    const check = webOrigin(item.trim());
    if ('problem' in check) throw new Error(`unchecked origin: ${check.problem}`);
    return check.origin;
  });
  return [...new Set(origins)];
}

/**
 * Which merchant accounts list a web origin in `secure_fields_origins` (decision 0140): asked for every Secure Fields
 * frame and submission, answered from a per-process cache (one query per origin, GIN-indexed), dropped in every
 * process when any merchant's list changes.
 */
@Injectable()
export class SecureFieldsOrigins {
  private readonly listing: SharedCache<readonly string[]>;

  constructor(
    private readonly accounts: MerchantAccountsRepository,
    caches: SharedCaches,
  ) {
    this.listing = caches.create<readonly string[]>('secure-fields-origins', {
      max: 10_000,
      ttlMs: LISTING_CACHE_TTL_MS,
    });
  }

  /** Whether some merchant account lists `origin` (normalised, as webOrigin returns it). */
  async anyLists(origin: string): Promise<boolean> {
    return (await this.merchantsListing(origin)).length > 0;
  }

  /** Whether `merchantAccountId` lists `origin` (normalised). */
  async lists(merchantAccountId: string, origin: string): Promise<boolean> {
    return (await this.merchantsListing(origin)).includes(merchantAccountId);
  }

  /** After a merchant's list changed: every process forgets every origin (changes are rare, lookups cheap). */
  async changed(): Promise<void> {
    await this.listing.invalidateAll();
  }

  private async merchantsListing(origin: string): Promise<readonly string[]> {
    const cached = this.listing.get(origin);
    if (cached) return cached;
    const snapshot = this.listing.snapshot();
    const merchants = await this.accounts.listingSecureFieldsOrigin(origin);
    this.listing.set(origin, merchants, snapshot);
    return merchants;
  }
}
