import { Injectable } from '@nestjs/common';
import { echoed } from '../../../platform/problem/echo';
import { InjectRepository } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { Repository } from 'typeorm';
import { isUniqueViolation } from '../../../platform/problem/database-errors';
import { KeysetRequest, seekPage } from '../../../platform/pagination/keyset';
import { ProblemException, ProblemFieldError } from '../../../platform/problem/problem';
import { FEATURE_SETTINGS, FEATURE_SWITCHES, MerchantAccountFeatures } from './dto/merchant-account.dto';
import { MerchantAccount } from './merchant-account.entity';
import { MerchantAccountErrors } from './merchant-accounts.errors';

@Injectable()
export class MerchantAccountsService {
  /**
   * Instance keys name their merchant per request, so its existence is checked on every such request.
   * Merchant accounts are never deleted, so a positive answer can be remembered safely.
   */
  private readonly known = new LRUCache<string, true>({ max: 10_000 });

  constructor(@InjectRepository(MerchantAccount) private readonly accounts: Repository<MerchantAccount>) {}

  async create(id: string, displayName: string, features: MerchantAccountFeatures = {}): Promise<MerchantAccount> {
    refuseFeaturesOn(features);
    try {
      await this.accounts.insert({ id, displayName });
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
    return this.get(id);
  }

  async get(id: string): Promise<MerchantAccount> {
    const account = await this.accounts.findOneBy({ id });
    if (!account)
      throw new ProblemException(MerchantAccountErrors.notFound, `No merchant account "${echoed(id)}" exists.`);
    return account;
  }

  /** One page, as `seekPage` fetches it (up to keyset.limit + 1 rows). */
  list(keyset: KeysetRequest): Promise<MerchantAccount[]> {
    return seekPage(this.accounts.createQueryBuilder('m'), 'm', keyset);
  }

  async update(
    id: string,
    changes: { displayName?: string; features?: MerchantAccountFeatures },
  ): Promise<MerchantAccount> {
    refuseFeaturesOn(changes.features ?? {});
    // Raw UPDATE: updated_at is set by the database clock, like created_at, never by a JS Date.
    const [, affected] = await this.accounts.query<[unknown, number]>(
      'UPDATE merchant_accounts SET display_name = COALESCE($2, display_name), updated_at = now() WHERE id = $1',
      [id, changes.displayName ?? null],
    );
    if (!affected)
      throw new ProblemException(MerchantAccountErrors.notFound, `No merchant account "${echoed(id)}" exists.`);
    return this.get(id);
  }

  async exists(id: string): Promise<boolean> {
    if (this.known.has(id)) return true;
    const found = await this.accounts.exists({ where: { id } });
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
