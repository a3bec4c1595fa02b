import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Observable, map } from 'rxjs';
import { ProblemValidationPipe } from '../http/validation.pipe';
import { CursorScope } from './cursor';
import { KeysetRequest, KeysetRow } from './keyset';
import { Page } from './page';
import type { PagedQuery } from './page-query';
import { KEYSET_REQUEST, PAGINATED_ROUTE, PaginatedRequest, PaginatedRoute } from './paginated-route';
import { PaginationService } from './pagination.service';

interface Reply {
  header(name: string, value: string): unknown;
}

/** RFC 8288 `Link` value: the same path and query, each neighbour's cursor in place of this page's. */
function linkHeader(url: string, page: Page<unknown>): string | null {
  const links: string[] = [];
  for (const [rel, cursor] of [
    ['next', page.next_cursor],
    ['prev', page.previous_cursor],
  ] as const) {
    if (cursor === null) continue;
    const target = new URL(url, 'http://localhost');
    target.searchParams.set('cursor', cursor);
    links.push(`<${target.pathname}?${target.searchParams.toString()}>; rel="${rel}"`);
  }
  return links.length > 0 ? links.join(', ') : null;
}

/**
 * Serves every @Paginated route (see the decorator): the HTTP side of a list, in one place. Before
 * the handler it validates the whole query (the route's filter DTO plus `cursor` and `limit` with the
 * route's limits, so one problem names every offending parameter, exactly as the validation pipe
 * would), decodes the cursor against the route, merchant account and filters, and removes `cursor`
 * and `limit` from the query the handler's DTO sees. After it, it turns the rows into the envelope.
 */
@Injectable()
export class PaginationInterceptor implements NestInterceptor {
  private readonly validation = new ProblemValidationPipe();

  constructor(
    private readonly reflector: Reflector,
    private readonly pagination: PaginationService,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler<KeysetRow[]>): Promise<Observable<Page<unknown>>> {
    const route = this.reflector.get<PaginatedRoute | undefined>(PAGINATED_ROUTE, context.getHandler());
    if (!route) throw new Error('PaginationInterceptor used on a route without @Paginated()');
    const http = context.switchToHttp();
    const request = http.getRequest<PaginatedRequest & { [KEYSET_REQUEST]?: KeysetRequest }>();

    const query = (await this.validation.transform(request.query, {
      type: 'query',
      metatype: route.query,
    })) as PagedQuery & Record<string, unknown>;
    const { cursor, limit, ...filters } = query;
    const scope: CursorScope = {
      endpoint: route.scope,
      merchantAccountId: route.merchantAccountId
        ? route.merchantAccountId(request)
        : (request.principal?.merchantAccountId ?? null),
      filters: route.filters ? route.filters(filters, request) : (filters as CursorScope['filters']),
    };
    const keyset = this.pagination.keyset(scope, { cursor, limit }, route);
    request[KEYSET_REQUEST] = keyset;
    if (request.query && typeof request.query === 'object') {
      const raw = request.query as Record<string, unknown>;
      delete raw.cursor;
      delete raw.limit;
    }

    const reply = http.getResponse<Reply>();
    return next.handle().pipe(
      map((rows) => {
        const page = this.pagination.envelope(scope, keyset, rows, (row) => route.item.from(row));
        const link = linkHeader(request.url, page);
        if (link) reply.header('link', link);
        return page;
      }),
    );
  }
}
