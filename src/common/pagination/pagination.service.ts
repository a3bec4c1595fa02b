import { Inject, Injectable } from '@nestjs/common';
import { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { Timestamp } from '../../database/timestamp';
import { CursorCodec, CursorScope, KeysetPosition } from './cursor';
import { Page } from './page';
import { PageLimits, PageQuery } from './page-query';

export const CURSOR_CODEC = Symbol('CURSOR_CODEC');

export interface KeysetRow extends ObjectLiteral {
  id: string;
  createdAt: Timestamp;
}

export interface PaginateOptions<Row extends KeysetRow, Item> {
  /** Already filtered and scoped to the merchant account; no ORDER BY / LIMIT yet. */
  query: SelectQueryBuilder<Row>;
  /** The query builder alias of the listed entity. */
  alias: string;
  request: PageQuery;
  limits: PageLimits;
  scope: CursorScope;
  map: (row: Row) => Item;
}

/**
 * Keyset (seek) pagination, newest first, shared by every list endpoint. Rows are ordered by
 * (created_at DESC, id DESC) — id breaks ties between rows of the same microsecond — and compared
 * with a row-value predicate, which a (merchant_account_id, created_at DESC, id DESC) index serves
 * at any depth. One extra row is fetched to learn whether another page exists; no COUNT, no OFFSET.
 */
@Injectable()
export class PaginationService {
  constructor(@Inject(CURSOR_CODEC) private readonly cursors: CursorCodec) {}

  async paginate<Row extends KeysetRow, Item>(options: PaginateOptions<Row, Item>): Promise<Page<Item>> {
    const { query, alias, scope, limits } = options;
    const limit = options.request.limit ?? limits.default;
    const cursor = options.request.cursor === undefined ? null : this.cursors.decode(scope, options.request.cursor);
    const backwards = cursor?.direction === 'previous';

    if (cursor) {
      query.andWhere(
        `(${alias}.created_at, ${alias}.id) ${backwards ? '>' : '<'} (CAST(:keysetCreatedAt AS timestamptz), :keysetId)`,
        { keysetCreatedAt: cursor.position.createdAt, keysetId: cursor.position.id },
      );
    }
    const order = backwards ? 'ASC' : 'DESC';
    const fetched = await query
      .orderBy(`${alias}.created_at`, order)
      .addOrderBy(`${alias}.id`, order)
      .limit(limit + 1)
      .getMany();

    const more = fetched.length > limit;
    const rows = fetched.slice(0, limit);
    if (backwards) rows.reverse();

    const position = (row: Row): KeysetPosition => ({ createdAt: row.createdAt.toISOString(), id: row.id });
    const first = rows.length > 0 ? position(rows[0]) : cursor?.position;
    const last = rows.length > 0 ? position(rows[rows.length - 1]) : cursor?.position;
    // Walking forward, older rows remain iff we fetched one too many; newer rows exist behind any cursor.
    // Walking backward, it is the other way round.
    const hasNext = backwards ? cursor !== null : more;
    const hasPrevious = backwards ? more : cursor !== null;

    return {
      items: rows.map(options.map),
      limit,
      next_cursor: hasNext && last ? this.cursors.encode(scope, 'next', last) : null,
      previous_cursor: hasPrevious && first ? this.cursors.encode(scope, 'previous', first) : null,
    };
  }
}
