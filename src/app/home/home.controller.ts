import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Public } from '../../modules/merchants/access/scopes';

class HomeResponse {
  @ApiProperty({ example: 'vault-forward' })
  service!: string;
  @ApiProperty({ example: '/dashboard/', description: 'The dashboard (sign in with an API key’s token).' })
  dashboard!: string;
  @ApiProperty({ example: '/docs', description: 'The API reference, browsable.' })
  docs!: string;
  @ApiProperty({ example: '/openapi.json', description: 'The OpenAPI document (also /openapi.yaml).' })
  openapi!: string;
  @ApiProperty({ example: '/errors', description: 'Every problem type the API answers with, explained.' })
  errors!: string;
  @ApiProperty({ example: '/health/ready', description: 'Whether this process serves requests.' })
  health!: string;
}

const HOME: HomeResponse = {
  service: 'vault-forward',
  dashboard: '/dashboard/',
  docs: '/docs',
  openapi: '/openapi.json',
  errors: '/errors',
  health: '/health/ready',
};

/** `GET /`: a person who opens the service's address finds where to go, instead of a 404. */
@ApiTags('Service')
@Controller()
@Public()
export class HomeController {
  @Get()
  @ApiOperation({
    summary: 'Where the dashboard, the API reference and the problem registry are. No token needed.',
  })
  @ApiOkResponse({ type: HomeResponse })
  home(): HomeResponse {
    return HOME;
  }
}
