import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export const MAX_ACTIVITY_MINUTES = 1440;

export class ForwardActivityQuery {
  @ApiPropertyOptional({
    type: Number,
    minimum: 1,
    maximum: MAX_ACTIVITY_MINUTES,
    default: 60,
    description: 'How many whole minutes, up to and including the current one.',
  })
  @IsOptional()
  @Transform(({ value }) =>
    typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value === undefined ? undefined : NaN,
  )
  @IsInt({ message: `must be a whole number from 1 to ${MAX_ACTIVITY_MINUTES}` })
  @Min(1, { message: `must be a whole number from 1 to ${MAX_ACTIVITY_MINUTES}` })
  @Max(MAX_ACTIVITY_MINUTES, { message: `must be a whole number from 1 to ${MAX_ACTIVITY_MINUTES}` })
  minutes?: number;
}

export class ForwardActivityMinute {
  @ApiTimestamp({ description: 'Start of the minute (UTC).' })
  minute!: string;
  @ApiProperty({ description: 'The downstream answered with a status below 400.' })
  succeeded!: number;
  @ApiProperty({ description: 'The downstream answered with a status of 400 or more.' })
  downstream_error!: number;
  @ApiProperty({
    description:
      'The service answered with its own error (refused, unreachable, timed out); see the records’ error_type.',
  })
  failed!: number;
  @ApiProperty({ description: 'Sent, outcome not recorded yet.' })
  pending!: number;
}

export class ForwardActivityResponse {
  @ApiProperty({ enum: ['vault-forward-activity'] })
  type!: 'vault-forward-activity';
  @ApiTimestamp({ description: 'Start of the first minute.' })
  from!: string;
  @ApiTimestamp({ description: 'End of the last (current) minute.' })
  until!: string;
  @ApiProperty({ type: [ForwardActivityMinute], description: 'One entry per minute, oldest first, zeros included.' })
  minutes!: ForwardActivityMinute[];
}
