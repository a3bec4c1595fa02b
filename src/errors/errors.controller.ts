import { Controller, Get, Param } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/scopes';
import { ApiProblems } from '../common/openapi/api-problems';
import { CommonErrors } from '../common/problem/common.errors';
import {
  findProblemDefinition,
  ProblemDefinition,
  problemDefinitions,
  ProblemException,
  problemType,
} from '../common/problem/problem';

function describe(definition: ProblemDefinition) {
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
  list() {
    return { items: problemDefinitions().map(describe) };
  }

  @Get(':code')
  @ApiOperation({ summary: 'One problem type. No token needed.' })
  @ApiProblems(CommonErrors.resourceNotFound)
  get(@Param('code') code: string) {
    const definition = findProblemDefinition(code);
    if (!definition) throw new ProblemException(CommonErrors.resourceNotFound, `No problem type "${code}" exists.`);
    return describe(definition);
  }
}
