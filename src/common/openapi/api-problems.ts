import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ProblemDefinition, problemType } from '../problem/problem';

class ProblemFieldErrorSchema {
  @ApiProperty({ enum: ['header', 'query', 'body', 'path'] })
  location!: string;
  @ApiProperty({ example: 'display_name' })
  name!: string;
  @ApiProperty({ example: 'must be between 1 and 200 characters' })
  message!: string;
}

/** RFC 9457 problem details, as every error of the service is rendered. */
export class ProblemSchema {
  @ApiProperty({ example: '/errors/validation-failed', description: 'Stable URI; GET it for a description.' })
  type!: string;
  @ApiProperty({ example: 'Invalid request' })
  title!: string;
  @ApiProperty({ example: 400 })
  status!: number;
  @ApiProperty({ example: 'display_name must be between 1 and 200 characters.' })
  detail!: string;
  @ApiProperty({ example: 'validation-failed', description: 'The last segment of `type`, for switch statements.' })
  code!: string;
  @ApiPropertyOptional({ example: '/buyers' })
  instance?: string;
  @ApiPropertyOptional({ example: '1f0c1c1e-4d0e-4c1e-9f3b-8f2f8f0a3c11' })
  request_id?: string;
  @ApiPropertyOptional({ type: [ProblemFieldErrorSchema] })
  errors?: ProblemFieldErrorSchema[];
}

/**
 * Documents the problems a route (or a whole controller) can answer with, grouped by status, each
 * with its stable `type`, so the OpenAPI document lists every problem type a client must handle.
 */
export function ApiProblems(...definitions: ProblemDefinition[]): ClassDecorator & MethodDecorator {
  const byStatus = new Map<number, ProblemDefinition[]>();
  for (const definition of definitions) {
    byStatus.set(definition.status, [...(byStatus.get(definition.status) ?? []), definition]);
  }
  return applyDecorators(
    ApiExtraModels(ProblemSchema),
    ...[...byStatus.entries()].map(([status, defs]) =>
      ApiResponse({
        status,
        description: defs.map((d) => `\`${problemType(d.code)}\` ${d.title}`).join('; '),
        content: { 'application/problem+json': { schema: { $ref: getSchemaPath(ProblemSchema) } } },
      }),
    ),
  );
}
