import { Inject, Injectable } from '@nestjs/common';
import { CursorCodec, CursorScope } from './cursor';
import { KeysetRequest, KeysetRow, keysetPage } from './keyset';
import { Page } from './page';

export const CURSOR_CODEC = Symbol('CURSOR_CODEC');

export interface PageLimits {
  default: number;
  max: number;
}

/**
 * Cursors in, envelope out: the two ends of a list request, around the feature's keyset query
 * (`KeysetTable.seekPage`). The PaginationInterceptor calls them for every list route; benchmarks call them
 * directly. `limit` is already validated (the interceptor's query check).
 */
@Injectable()
export class PaginationService {
  constructor(@Inject(CURSOR_CODEC) private readonly cursors: CursorCodec) {}

  keyset(scope: CursorScope, query: { cursor?: string; limit?: number }, limits: PageLimits): KeysetRequest {
    return {
      limit: query.limit ?? limits.default,
      cursor: query.cursor === undefined ? null : this.cursors.decode(scope, query.cursor),
    };
  }

  /** `fetched`: what `KeysetTable.seekPage` returned for `keyset` (up to limit + 1 rows, in fetch order). */
  envelope<Row extends KeysetRow, Item>(
    scope: CursorScope,
    keyset: KeysetRequest,
    fetched: Row[],
    map: (row: Row) => Item,
  ): Page<Item> {
    const page = keysetPage(fetched, keyset);
    return {
      items: page.rows.map(map),
      limit: keyset.limit,
      next_cursor: page.next ? this.cursors.encode(scope, 'next', page.next) : null,
      previous_cursor: page.previous ? this.cursors.encode(scope, 'previous', page.previous) : null,
    };
  }
}
