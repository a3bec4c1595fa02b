import { Injectable } from '@nestjs/common';
import { echoed } from '../../../platform/problem/echo';
import { LRUCache } from 'lru-cache';
import { isUniqueViolation } from '../../../platform/problem/database-errors';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { ProblemException, ProblemFieldError } from '../../../platform/problem/problem';
import { FEATURE_SETTINGS, FEATURE_SWITCHES, MerchantAccountFeatures } from './dto/merchant-account.dto';
import { MerchantAccount } from './merchant-account.entity';
import { MerchantAccountErrors } from './merchant-accounts.errors';
import { MerchantAccountsRepository } from './merchant-accounts.repository';
import { normaliseSecureFieldsOrigins, SecureFieldsOrigins } from './secure-fields-origins';

@Injectable()
export class MerchantAccountsService {
  /**
   * Instance keys name their merchant per request, so its existence is checked on every such request.
   * Merchant accounts are never deleted, so a positive answer can be remembered safely.
   */
  private readonly known = new LRUCache<string, true>({ max: 10_000 });

  constructor(
    private readonly accounts: MerchantAccountsRepository,
    private readonly secureFieldsOrigins: SecureFieldsOrigins,
  ) {}

  async create(
    id: string,
    displayName: string,
    features: MerchantAccountFeatures = {},
    secureFieldsOrigins: readonly string[] = [],
  ): Promise<MerchantAccount> {
    refuseFeaturesOn(features);
    const origins = normaliseSecureFieldsOrigins(secureFieldsOrigins);
    try {
      await this.accounts.insert(id, displayName, origins);
    } catch (error) {
      if (isUniqueViolation(error, 'merchant_accounts_pkey')) {
        throw new ProblemException(
          MerchantAccountErrors.duplicateId,
          `A merchant account "${echoed(id)}" already exists.`,
          [{ location: 'body', name: 'id', message: 'already taken' }],
        );
      }
      throw error;
    }
    if (origins.length > 0) await this.secureFieldsOrigins.changed();
    return this.get(id);
  }

  async get(id: string): Promise<MerchantAccount> {
    const account = await this.accounts.find(id);
    if (!account)
      throw new ProblemException(MerchantAccountErrors.notFound, `No merchant account "${echoed(id)}" exists.`);
    return account;
  }

  /** One page, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  list(keyset: KeysetRequest): Promise<MerchantAccount[]> {
    return this.accounts.page(keyset);
  }

  async update(
    id: string,
    changes: { displayName?: string; features?: MerchantAccountFeatures; secureFieldsOrigins?: readonly string[] },
  ): Promise<MerchantAccount> {
    refuseFeaturesOn(changes.features ?? {});
    const origins = changes.secureFieldsOrigins && normaliseSecureFieldsOrigins(changes.secureFieldsOrigins);
    if (!(await this.accounts.update(id, changes.displayName ?? null, origins ?? null)))
      throw new ProblemException(MerchantAccountErrors.notFound, `No merchant account "${echoed(id)}" exists.`);
    if (origins) await this.secureFieldsOrigins.changed();
    return this.get(id);
  }

  async exists(id: string): Promise<boolean> {
    if (this.known.has(id)) return true;
    const found = await this.accounts.exists(id);
    if (found) this.known.set(id, true);
    return found;
  }
}

/**
 * The Gr4vy SDK sends its defaults for features this service does not have (false, or nothing); those
 * are true here and pass. A value that would turn a feature on is refused, never silently ignored.
 */
function refuseFeaturesOn(features: MerchantAccountFeatures): void {
  const errors: ProblemFieldError[] = [];
  for (const name of FEATURE_SWITCHES) {
    if (features[name] === true)
      errors.push({ location: 'body', name, message: 'must be false: this service has no such feature' });
  }
  for (const name of FEATURE_SETTINGS) {
    const value = features[name];
    if (value !== undefined && value !== null)
      errors.push({ location: 'body', name, message: 'must be null: this service has no such feature' });
  }
  if (errors.length > 0) {
    throw new ProblemException(
      MerchantAccountErrors.featureUnavailable,
      `This service does not have the feature(s) these fields would turn on: ${errors.map((e) => e.name).join(', ')}.`,
      errors,
    );
  }
}
