import type { Type as ClassType } from '@nestjs/common';
import type { CursorScope } from './cursor';
import type { KeysetRow } from './keyset';
import type { PagedQuery } from './page-query';
import type { PageLimits } from './pagination.service';

// What @Paginated() declares and the interceptor reads, in a file of its own so that the decorator
// (which applies the interceptor) and the interceptor (which reads the declaration) do not import each other.

export const PAGINATED_ROUTE = Symbol('PAGINATED_ROUTE');
/** Where the interceptor leaves the route's KeysetRequest on the request for @Keyset(). */
export const KEYSET_REQUEST = Symbol('KEYSET_REQUEST');

/** The request as the interceptor reads it (the AuthGuard has put the principal on it). */
export interface PaginatedRequest {
  url: string;
  query: unknown;
  params: Record<string, string>;
  principal?: { merchantAccountId: string | null; keyMerchantAccountId: string | null };
}

export type CursorFilters = CursorScope['filters'];

export interface PaginatedOptions<Row extends KeysetRow, Item, Filters = Record<string, unknown>> extends PageLimits {
  /** The name cursors are bound to: a cursor of one list is refused by every other. */
  scope: string;
  /** The item of the page: its schema in OpenAPI, and `from` turns each row the handler returns into it. */
  item: ClassType<Item> & { from(row: Row): Item };
  /**
   * The filter values a cursor is bound to (default: the filter query parameters as given). Cursors
   * issued before must keep working, so a route whose binding normalises its filters says so here.
   */
  filters?: (query: Filters, request: PaginatedRequest) => CursorFilters;
  /** The merchant account a cursor is bound to (default: the one the request acts for, null on instance routes). */
  merchantAccountId?: (request: PaginatedRequest) => string | null;
}

/** What the interceptor reads from a route: its options, and the query class it validates with. */
export interface PaginatedRoute extends PaginatedOptions<KeysetRow, unknown, Record<string, unknown>> {
  query: ClassType<PagedQuery>;
}
