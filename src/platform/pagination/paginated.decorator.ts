import {
  applyDecorators,
  createParamDecorator,
  ExecutionContext,
  SetMetadata,
  Type as ClassType,
  UseInterceptors,
} from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ApiOkResponse, ApiQuery } from '@nestjs/swagger';
import { ApiProblems } from '../openapi/api-problems';
import { CommonErrors } from '../problem/common.errors';
import type { KeysetRequest, KeysetRow } from './keyset';
import { PageOf } from './page';
import { CURSOR_DESCRIPTION, pagedQueryClass } from './page-query';
import { PaginationErrors } from './pagination.errors';
import { KEYSET_REQUEST, PAGINATED_ROUTE, PaginatedOptions, PaginatedRoute } from './paginated-route';
import { PaginationInterceptor } from './pagination.interceptor';

const LINK_HEADER_DESCRIPTION =
  'RFC 8288 links to the neighbouring pages, for clients that walk pages generically: `rel="next"` (the ' +
  'older page, absent on the last page) and `rel="prev"` (the newer page, absent on the first), each a ' +
  "path-absolute reference with the same query parameters and that page's cursor. Absent when the list " +
  'has a single page.';

/** The class of the handler's `@Query()` parameter (its filters), if it has one. */
function filterClassOf(target: object, key: string | symbol): ClassType<object> | undefined {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, target.constructor, key) ?? {}) as Record<
    string,
    { index: number; data?: unknown }
  >;
  const query = Object.entries(args).find(
    ([name, arg]) => name.split(':')[0] === String(RouteParamtypes.QUERY) && arg.data === undefined,
  );
  if (!query) return undefined;
  const types = (Reflect.getMetadata('design:paramtypes', target, key) ?? []) as Array<ClassType<object>>;
  return types[query[1].index];
}

/**
 * A list route: `cursor` and `limit` are validated (`limit` from 1 to `max`, `default` when absent)
 * and the cursor decoded by the PaginationInterceptor, which hands the handler a KeysetRequest
 * (`@Keyset()`) and turns the rows it returns (from `KeysetTable.seekPage`: up to limit + 1) into the page
 * envelope with its cursors and a `Link` header. The OpenAPI operation (parameters, the page schema,
 * the header, the problems) is generated from the same options. The handler's `@Query()` DTO, if
 * any, holds the filters only and extends PageQuery.
 */
export function Paginated<Row extends KeysetRow, Item, Filters = Record<string, unknown>>(
  options: PaginatedOptions<Row, Item, Filters>,
): MethodDecorator {
  return (target, key, descriptor) => {
    const route: PaginatedRoute = {
      ...(options as unknown as PaginatedOptions<KeysetRow, unknown, Record<string, unknown>>),
      query: pagedQueryClass(filterClassOf(target, key), options),
    };
    return applyDecorators(
      SetMetadata(PAGINATED_ROUTE, route),
      UseInterceptors(PaginationInterceptor),
      ApiQuery({ name: 'cursor', required: false, type: String, description: CURSOR_DESCRIPTION }),
      ApiQuery({
        name: 'limit',
        required: false,
        // Only whole numbers pass (page-query.ts): `integer`, which Number would document as `number`.
        type: 'integer',
        minimum: 1,
        maximum: options.max,
        default: options.default,
      }),
      ApiOkResponse({
        type: PageOf(options.item),
        headers: { Link: { description: LINK_HEADER_DESCRIPTION, schema: { type: 'string' } } },
      }),
      ApiProblems(CommonErrors.validationFailed, PaginationErrors.invalidCursor),
    )(target, key, descriptor);
  };
}

/** The KeysetRequest of a @Paginated route: its limit and decoded cursor. */
export const Keyset = createParamDecorator((_data: unknown, ctx: ExecutionContext): KeysetRequest => {
  const keyset = ctx.switchToHttp().getRequest<{ [KEYSET_REQUEST]?: KeysetRequest }>()[KEYSET_REQUEST];
  if (!keyset) throw new Error('@Keyset() used on a route without @Paginated()');
  return keyset;
});
