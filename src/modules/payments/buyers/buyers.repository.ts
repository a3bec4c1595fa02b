import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { KeysetRequest, seekPage } from '../../../platform/pagination/keyset';
import { Buyer } from './buyer.entity';

export interface BuyerFilters {
  /** Case-insensitive substring of display_name or external_identifier. */
  search?: string;
  /** Exact external_identifier. */
  external_identifier?: string;
}

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The buyers list query, apart from BuyersService so that the service holds no pagination. */
@Injectable()
export class BuyersRepository {
  constructor(@InjectRepository(Buyer) private readonly buyers: Repository<Buyer>) {}

  /** One page of a merchant account's buyers, as `seekPage` fetches it (up to keyset.limit + 1 rows). */
  page(merchantAccountId: string, filters: BuyerFilters, keyset: KeysetRequest): Promise<Buyer[]> {
    const query = this.buyers
      .createQueryBuilder('b')
      .where('b.merchant_account_id = :merchantAccountId', { merchantAccountId });
    if (filters.external_identifier !== undefined) {
      query.andWhere('b.external_identifier = :externalIdentifier', {
        externalIdentifier: filters.external_identifier,
      });
    }
    if (filters.search !== undefined) {
      query.andWhere('(b.display_name ILIKE :search OR b.external_identifier ILIKE :search)', {
        search: likePattern(filters.search),
      });
    }
    return seekPage(query, 'b', keyset);
  }
}
