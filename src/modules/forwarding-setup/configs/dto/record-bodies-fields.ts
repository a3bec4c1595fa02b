import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, Max, Min, ValidateIf } from 'class-validator';
import { RECORD_BODIES_DEFAULT_DAYS, RECORD_BODIES_MAX_DAYS } from '../vault-forward-configs.service';

/**
 * The two input fields by which a resource asks its records to keep bodies (configs for forwards, inbound routes
 * for inbound requests): one rule for both, each describing what its records keep.
 */
export const RecordBodiesInput = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({ type: Boolean, default: false, description }),
    ValidateIf((_, v) => v !== undefined),
    IsBoolean(),
  );

export const RecordBodiesRetentionInput = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: 1,
      maximum: RECORD_BODIES_MAX_DAYS,
      default: RECORD_BODIES_DEFAULT_DAYS,
      description,
    }),
    ValidateIf((_, v) => v !== undefined),
    IsInt(),
    Min(1),
    Max(RECORD_BODIES_MAX_DAYS),
  );
