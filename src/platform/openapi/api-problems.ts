import { PATH_METADATA } from '@nestjs/common/constants';
import { ApiProperty, ApiPropertyOptional, ApiSchema, DECORATORS } from '@nestjs/swagger';
import { GR4VY_ERROR_CONTENT_TYPE, gr4vyCode } from '../problem/gr4vy-error';
import { findProblemDefinition, ProblemDefinition, problemType } from '../problem/problem';

const PROBLEM_MEDIA_TYPE = 'application/problem+json';
const PROBLEM_SCHEMA_REF = '#/components/schemas/Problem';
const GR4VY_ERROR_SCHEMA_REF = '#/components/schemas/Gr4vyError';

@ApiSchema({ name: 'ProblemFieldError' })
class ProblemFieldErrorSchema {
  @ApiProperty({ type: String, enum: ['header', 'query', 'body', 'path'] })
  location!: string;
  @ApiProperty({ example: 'display_name' })
  name!: string;
  @ApiProperty({ example: 'must be between 1 and 200 characters' })
  message!: string;
}

/** RFC 9457 problem details, as every error of the service is rendered. */
@ApiSchema({ name: 'Problem' })
export class ProblemSchema {
  @ApiProperty({ example: '/errors/validation-failed', description: 'Stable URI; GET it for a description.' })
  type!: string;
  @ApiProperty({ example: 'Invalid request' })
  title!: string;
  @ApiProperty({ type: 'integer', minimum: 400, maximum: 599, example: 400 })
  status!: number;
  @ApiProperty({ example: 'display_name must be between 1 and 200 characters.' })
  detail!: string;
  @ApiProperty({ example: 'validation-failed', description: 'The last segment of `type`, for switch statements.' })
  code!: string;
  @ApiPropertyOptional({ example: '/buyers', description: 'The path of the request.' })
  instance?: string;
  @ApiPropertyOptional({
    example: '1f0c1c1e-4d0e-4c1e-9f3b-8f2f8f0a3c11',
    description: 'Also the x-request-id response header.',
  })
  request_id?: string;
  @ApiPropertyOptional({
    type: [ProblemFieldErrorSchema],
    description: 'One entry per offending field, query parameter or header.',
  })
  errors?: ProblemFieldErrorSchema[];
}

@ApiSchema({ name: 'Gr4vyErrorDetail' })
class Gr4vyErrorDetailSchema {
  @ApiProperty({ type: String, enum: ['header', 'query', 'body', 'path'] })
  location!: string;
  @ApiProperty({ example: 'validation-failed', description: 'The problem code of this error.' })
  type!: string;
  @ApiProperty({
    example: '/display_name',
    description: 'A JSON pointer into the body; the name of the query parameter, path parameter or header otherwise.',
  })
  pointer!: string;
  @ApiProperty({ example: 'must be between 1 and 200 characters' })
  message!: string;
}

/**
 * Gr4vy's error body (its SDKs' Error400, Error404, …), answered as application/json to a client
 * whose Accept prefers application/json to application/problem+json (decisions/0077).
 */
@ApiSchema({ name: 'Gr4vyError' })
export class Gr4vyErrorSchema {
  @ApiProperty({ type: String, enum: ['error'] })
  type!: string;
  @ApiProperty({
    example: 'bad_request',
    description:
      'Gr4vy’s code for the status (`bad_request`, `unauthorized`, `forbidden`, `not_found`, `method_not_allowed`, ' +
      '`duplicate_record`, `too_early`, `too_many_requests`, `server_error`, `bad_gateway`, `gateway_timeout`), or the ' +
      'problem’s own `code` for a status Gr4vy has no error for. The problem’s code is each detail’s `type`.',
  })
  code!: string;
  @ApiProperty({ type: 'integer', minimum: 400, maximum: 599, example: 400 })
  status!: number;
  @ApiProperty({ example: 'display_name must be between 1 and 200 characters.' })
  message!: string;
  @ApiProperty({
    type: [Gr4vyErrorDetailSchema],
    description: 'One entry per offending field, query parameter or header.',
  })
  details!: Gr4vyErrorDetailSchema[];
}

/** An OpenAPI response object (the subset this service writes). */
interface ProblemResponseObject {
  description: string;
  content: Record<string, { schema: Record<string, unknown> }>;
  headers?: Record<string, unknown>;
}

/**
 * The response of one status that answers with `definitions` (all of that status): the Problem
 * schema narrowed to exactly their codes, so a client (and the response check of the e2e suite)
 * knows every problem a route can answer with, and no other.
 */
function problemResponse(definitions: readonly ProblemDefinition[]): ProblemResponseObject {
  const codes = [...new Set(definitions.map((d) => d.code))].sort();
  const byCode = new Map(definitions.map((d) => [d.code, d]));
  const narrowed = { type: 'object', properties: { code: { type: 'string', enum: codes } } };
  const gr4vyCodes = [...new Set(definitions.map((d) => gr4vyCode(d.status, d.code)))].sort();
  const gr4vyNarrowed = { type: 'object', properties: { code: { type: 'string', enum: gr4vyCodes } } };
  return {
    description: codes.map((code) => `\`${problemType(code)}\` ${byCode.get(code)!.title}`).join('; '),
    content: {
      [PROBLEM_MEDIA_TYPE]: { schema: { allOf: [{ $ref: PROBLEM_SCHEMA_REF }, narrowed] } },
      [GR4VY_ERROR_CONTENT_TYPE]: { schema: { allOf: [{ $ref: GR4VY_ERROR_SCHEMA_REF }, gr4vyNarrowed] } },
    },
  };
}

/** The codes a response built by problemResponse carries, or [] for any other response. */
function problemCodesOf(response: unknown): string[] {
  const schema = (response as ProblemResponseObject | undefined)?.content?.[PROBLEM_MEDIA_TYPE]?.schema as
    { allOf?: Array<{ properties?: { code?: { enum?: string[] } } }> } | undefined;
  return schema?.allOf?.[1]?.properties?.code?.enum ?? [];
}

/** `responses` with `definitions` added, merged per status with the problems already there (a new object). */
export function withProblems<R extends Record<string, unknown>>(
  responses: R,
  definitions: readonly ProblemDefinition[],
): R {
  const merged: Record<string, unknown> = { ...responses };
  const byStatus = new Map<number, ProblemDefinition[]>();
  for (const definition of definitions)
    byStatus.set(definition.status, [...(byStatus.get(definition.status) ?? []), definition]);
  for (const [status, defs] of byStatus) {
    const existing = problemCodesOf(merged[status]).map((code) => findProblemDefinition(code)!);
    merged[status] = problemResponse([...existing, ...defs]);
  }
  return merged as R;
}

function addToHandler(handler: object, definitions: readonly ProblemDefinition[]): void {
  const responses = (Reflect.getMetadata(DECORATORS.API_RESPONSE, handler) ?? {}) as Record<string, unknown>;
  Reflect.defineMetadata(DECORATORS.API_RESPONSE, withProblems(responses, definitions), handler);
}

/**
 * Documents the problems a route (or every route of a controller) can answer with, grouped by status.
 * On a controller it merges into each route's own problems of the same status rather than being
 * shadowed by them (what @ApiResponse on a class would do), so e.g. the 400 of a list route names
 * both its validation problems and the guard's merchant-account-unknown.
 */
export function ApiProblems(...definitions: ProblemDefinition[]): ClassDecorator & MethodDecorator {
  return ((target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) {
      addToHandler(descriptor.value as object, definitions);
      return descriptor;
    }
    // Class decorators run after the method decorators, so every route handler is known here.
    const prototype = (target as { prototype: Record<string, unknown> }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = Object.getOwnPropertyDescriptor(prototype, name)?.value as object | undefined;
      if (
        name !== 'constructor' &&
        typeof handler === 'function' &&
        Reflect.getMetadata(PATH_METADATA, handler) !== undefined
      ) {
        addToHandler(handler, definitions);
      }
    }
    return target;
  }) as ClassDecorator & MethodDecorator;
}
