import { Controller, Get, Param } from '@nestjs/common';
import { echoed } from '../../platform/problem/echo';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Public } from '../../modules/merchants/access/scopes';
import { ApiProblems } from '../../platform/openapi/api-problems';
import { CommonErrors } from '../../platform/problem/common.errors';
import {
  findProblemDefinition,
  ProblemDefinition,
  problemDefinitions,
  ProblemException,
  problemType,
} from '../../platform/problem/problem';

export class ProblemTypeResponse {
  @ApiProperty({ example: '/errors/validation-failed' })
  type!: string;
  @ApiProperty({ example: 'validation-failed', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' })
  code!: string;
  @ApiProperty({ type: 'integer', minimum: 400, maximum: 599, example: 400 })
  status!: number;
  @ApiProperty({ example: 'Invalid request' })
  title!: string;
  @ApiProperty({ description: 'What the problem means and how to fix it.' })
  description!: string;
}

export class ProblemTypeListResponse {
  @ApiProperty({ type: [ProblemTypeResponse] })
  items!: ProblemTypeResponse[];
}

function describe(definition: ProblemDefinition): ProblemTypeResponse {
  return {
    type: problemType(definition.code),
    code: definition.code,
    status: definition.status,
    title: definition.title,
    description: definition.description,
  };
}

/** Makes every problem `type` URI dereferenceable: GET /errors/{code} explains it. */
@ApiTags('Errors')
@Controller('errors')
@Public()
export class ErrorsController {
  @Get()
  @ApiOperation({ summary: 'Every problem type the service can answer with. No token needed.' })
  @ApiOkResponse({ type: ProblemTypeListResponse })
  list(): ProblemTypeListResponse {
    return { items: problemDefinitions().map(describe) };
  }

  @Get(':code')
  @ApiOperation({ summary: 'One problem type. No token needed.' })
  @ApiOkResponse({ type: ProblemTypeResponse })
  @ApiProblems(CommonErrors.resourceNotFound)
  get(@Param('code') code: string): ProblemTypeResponse {
    const definition = findProblemDefinition(code);
    if (!definition)
      throw new ProblemException(CommonErrors.resourceNotFound, `No problem type "${echoed(code)}" exists.`);
    return describe(definition);
  }
}
