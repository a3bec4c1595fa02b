import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsUUID } from 'class-validator';
import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { PageQuery } from '../../../../platform/pagination/page-query';
import type { OpenedInboundBodies } from '../inbound-request-bodies';
import { INBOUND_OUTCOMES, InboundOutcome, InboundRequest } from '../inbound-request.entity';

export class ListInboundRequestsQuery extends PageQuery {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only the requests of this inbound route.' })
  @IsOptional()
  @IsUUID('all')
  route_id?: string;
}

export class InboundRequestResponse {
  @ApiProperty({ type: String, enum: ['inbound-request'] })
  type!: 'inbound-request';
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ format: 'uuid' })
  route_id!: string;
  @ApiProperty({ description: 'The x-request-id of the request (its log line).' })
  request_id!: string;
  @ApiProperty({ description: 'How the caller proved itself (for mutual-tls: the certificate’s subject and SHA-256).' })
  caller!: string;
  @ApiProperty()
  method!: string;
  @ApiProperty({ description: 'The path after the route’s id (card numbers masked), without the query.' })
  path!: string;
  @ApiProperty({ enum: INBOUND_OUTCOMES })
  outcome!: InboundOutcome;
  @ApiProperty({ type: 'integer', description: 'The status the caller got.' })
  status!: number;
  @ApiProperty({ type: String, nullable: true, description: 'Our problem’s code, when the request was refused.' })
  problem_code!: string | null;
  @ApiProperty({ type: 'integer', nullable: true })
  upstream_status!: number | null;
  @ApiProperty({ type: [String], description: 'The payment methods the request’s card numbers became (each once).' })
  payment_method_ids!: string[];
  @ApiProperty({ type: [String], description: 'The checkout sessions that hold its security codes.' })
  checkout_session_ids!: string[];
  @ApiTimestamp({
    nullable: true,
    description:
      'When the route records bodies (`record_bodies`, decision 0158): until when this record keeps them (the ' +
      'purge erases them then; the record stays). Null when none were kept.',
  })
  bodies_kept_until!: string | null;
  @ApiTimestamp()
  created_at!: string;

  static from(record: InboundRequest): InboundRequestResponse {
    return {
      type: 'inbound-request',
      id: record.id,
      route_id: record.routeId,
      request_id: record.requestId,
      caller: record.caller,
      method: record.method,
      path: record.path,
      outcome: record.outcome,
      status: record.status,
      problem_code: record.problemCode,
      upstream_status: record.upstreamStatus,
      payment_method_ids: record.paymentMethodIds,
      checkout_session_ids: record.checkoutSessionIds,
      bodies_kept_until: record.bodiesKeptUntil?.toISOString() ?? null,
      created_at: record.createdAt.toISOString(),
    };
  }
}

/** One record read by its id: the list's fields and the bodies it keeps, when its route records them. */
export class InboundRequestDetailResponse extends InboundRequestResponse {
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The request body as sent to the upstream: card numbers and security codes replaced by ids, the values of ' +
      'fields named as authentication data removed, card numbers masked, at most 65536 bytes ' +
      '(request_body_truncated). Null when not kept (the route’s `record_bodies` off, refused before) or purged.',
  })
  request_body!: string | null;
  @ApiProperty({ type: Boolean, description: 'The request body was longer than 65536 bytes and is cut there.' })
  request_body_truncated!: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The upstream’s answer as returned to the caller, card numbers masked, at most 65536 bytes ' +
      '(response_body_truncated). Null when there was no answer, when not kept or purged.',
  })
  response_body!: string | null;
  @ApiProperty({ type: Boolean, description: 'The answer was longer than 65536 bytes and is cut there.' })
  response_body_truncated!: boolean;

  static detail(record: InboundRequest, bodies: OpenedInboundBodies): InboundRequestDetailResponse {
    return {
      ...InboundRequestResponse.from(record),
      request_body: bodies.request_body,
      request_body_truncated: record.requestBodyTruncated,
      response_body: bodies.response_body,
      response_body_truncated: record.responseBodyTruncated,
    };
  }
}
