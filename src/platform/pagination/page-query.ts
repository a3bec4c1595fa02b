import { Type as ClassType } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import type { PageLimits } from './pagination.service';

export const CURSOR_DESCRIPTION = 'next_cursor or previous_cursor of an earlier response, unchanged.';

/**
 * The base of a list route's filter DTO. It documents `cursor` and `limit` in OpenAPI (first, as they
 * always were) but has no such properties: the PaginationInterceptor validates and consumes them, and
 * removes them from the query before the handler's DTO is validated, so a handler cannot read them;
 * it is given a KeysetRequest instead. (Declared fields would exist on every instance and be refused
 * by the whitelist.)
 */
export class PageQuery {}
ApiPropertyOptional({ type: String, description: CURSOR_DESCRIPTION })(PageQuery.prototype, 'cursor');
ApiPropertyOptional({ type: 'integer', minimum: 1 })(PageQuery.prototype, 'limit');

export interface PagedQuery {
  cursor?: string;
  limit?: number;
}

/**
 * The route's filter DTO with `cursor` and `limit` validated for the route's limits: what the
 * interceptor validates the whole query with, so one bad request still gets one problem naming every
 * offending parameter. `limit` accepts a whole number only: "1.5", "abc", "" and "-1" are refused,
 * never rounded or clamped.
 */
export function pagedQueryClass(filters: ClassType<object> | undefined, limits: PageLimits): ClassType<PagedQuery> {
  const Base: ClassType<object> = filters ?? class {};
  const message = `must be a whole number from 1 to ${limits.max}`;
  class PagedQueryForRoute extends Base implements PagedQuery {
    @IsOptional()
    @IsString()
    cursor?: string;

    @IsOptional()
    @Transform(({ value }) =>
      typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value === undefined ? undefined : NaN,
    )
    @IsInt({ message })
    @Min(1, { message })
    @Max(limits.max, { message })
    limit?: number;
  }
  return PagedQueryForRoute;
}
