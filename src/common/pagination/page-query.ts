import { Type as ClassType } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

export interface PageLimits {
  default: number;
  max: number;
}

export interface PageQuery {
  cursor?: string;
  limit?: number;
}

export interface PageQueryClass extends ClassType<PageQuery> {
  readonly limits: PageLimits;
}

/**
 * The `cursor` / `limit` query DTO, made per endpoint because each declares its own default and
 * maximum limit (spec 4.3). Filters are added by extending the returned class. `limit` accepts a
 * whole number only: "1.5", "abc", "" and "-1" are refused, never rounded or clamped.
 */
export function PageQueryDto(limits: PageLimits): PageQueryClass {
  class PageQueryDtoForEndpoint implements PageQuery {
    static readonly limits = limits;

    @ApiPropertyOptional({ description: 'next_cursor or previous_cursor of an earlier response, unchanged.' })
    @IsOptional()
    @IsString()
    cursor?: string;

    @ApiPropertyOptional({ type: Number, minimum: 1, maximum: limits.max, default: limits.default })
    @IsOptional()
    @Transform(({ value }) =>
      typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value === undefined ? undefined : NaN,
    )
    @IsInt({ message: `must be a whole number from 1 to ${limits.max}` })
    @Min(1, { message: `must be a whole number from 1 to ${limits.max}` })
    @Max(limits.max, { message: `must be a whole number from 1 to ${limits.max}` })
    limit?: number;
  }
  return PageQueryDtoForEndpoint;
}
