import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { Timestamp } from '../database/timestamp';
import type { DecodedCursor, KeysetPosition } from './cursor';

/** A listed row: every paged table is ordered by (created_at, id). */
export interface KeysetRow extends ObjectLiteral {
  id: string;
  createdAt: Timestamp;
}

/** What a paginated handler is given: how many rows it may show, and where the page starts. */
export interface KeysetRequest {
  limit: number;
  /** null for the first page. */
  cursor: DecodedCursor | null;
}

/**
 * The one keyset (seek) query of every list, newest first: rows ordered by (created_at DESC, id DESC)
 * — id breaks ties between rows of the same microsecond — and compared with a row-value predicate,
 * which a (merchant_account_id, created_at DESC, id DESC) index serves at any depth. One extra row
 * is fetched to learn whether another page exists: no COUNT, no OFFSET. `query` is already filtered
 * and scoped to the merchant account, with no ORDER BY / LIMIT yet. Rows come back as fetched
 * (oldest first when walking backwards); `keysetPage` puts them in order.
 */
export function seekPage<Row extends KeysetRow>(
  query: SelectQueryBuilder<Row>,
  alias: string,
  keyset: KeysetRequest,
): Promise<Row[]> {
  const { cursor } = keyset;
  const backwards = cursor?.direction === 'previous';
  if (cursor) {
    query.andWhere(
      `(${alias}.created_at, ${alias}.id) ${backwards ? '>' : '<'} (CAST(:keysetCreatedAt AS timestamptz), :keysetId)`,
      { keysetCreatedAt: cursor.position.createdAt, keysetId: cursor.position.id },
    );
  }
  const order = backwards ? 'ASC' : 'DESC';
  return query
    .orderBy(`${alias}.created_at`, order)
    .addOrderBy(`${alias}.id`, order)
    .limit(keyset.limit + 1)
    .getMany();
}

/** One page of rows fetched by `seekPage`, newest first, and where its neighbours start. */
export interface KeysetPage<Row> {
  rows: Row[];
  /** Position of the last row shown, when older rows remain. */
  next: KeysetPosition | null;
  /** Position of the first row shown, when newer rows exist. */
  previous: KeysetPosition | null;
}

export function keysetPage<Row extends KeysetRow>(fetched: Row[], keyset: KeysetRequest): KeysetPage<Row> {
  const { cursor, limit } = keyset;
  const backwards = cursor?.direction === 'previous';
  const more = fetched.length > limit;
  const rows = fetched.slice(0, limit);
  if (backwards) rows.reverse();

  const position = (row: Row): KeysetPosition => ({ createdAt: row.createdAt.toISOString(), id: row.id });
  // An empty page still has neighbours: the cursor's own position stands for both of its edges.
  const first = rows.length > 0 ? position(rows[0]) : cursor?.position;
  const last = rows.length > 0 ? position(rows[rows.length - 1]) : cursor?.position;
  // Walking forward, older rows remain iff we fetched one too many; newer rows exist behind any cursor.
  // Walking backward, it is the other way round.
  const hasNext = backwards ? cursor !== null : more;
  const hasPrevious = backwards ? more : cursor !== null;
  return {
    rows,
    next: hasNext && last ? last : null,
    previous: hasPrevious && first ? first : null,
  };
}
