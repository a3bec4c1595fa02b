import { ApiProperty } from '@nestjs/swagger';

const TIMESTAMP_EXAMPLE = '2026-11-20T09:14:03.123456+00:00';

/**
 * A timestamp field of a response: RFC 3339 with microseconds and an explicit UTC offset, as
 * PostgreSQL keeps it (a JavaScript Date would lose the last three digits, so it stays a string).
 */
export function ApiTimestamp(options: { nullable?: boolean; description?: string } = {}): PropertyDecorator {
  return ApiProperty({
    type: String,
    format: 'date-time',
    example: options.nullable ? null : TIMESTAMP_EXAMPLE,
    ...(options.nullable ? { nullable: true } : {}),
    description: [options.description, 'RFC 3339, microsecond precision, UTC (`+00:00`).'].filter(Boolean).join(' '),
  });
}
