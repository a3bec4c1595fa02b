import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageQuery } from '../../../../platform/pagination/page-query';
import { loggableUrl } from '../../../../platform/logging/redaction';
import {
  ForwardJob,
  JOB_STATUSES,
  JobAttempt,
  JobStatus,
  RESPONSE_ERASED_REASONS,
  ResponseErasedReason,
} from '../rows/forward-job.entity';
import type { StoredResponse } from '../forward-jobs.repository';

export class ListForwardJobsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: JOB_STATUSES })
  @IsOptional()
  @IsIn(JOB_STATUSES, { message: `must be one of ${JOB_STATUSES.join(', ')}` })
  status?: JobStatus;
}

class ForwardJobTarget {
  @ApiProperty()
  method!: string;
  @ApiProperty({ description: 'Without the query string.' })
  url!: string;
}

class ForwardJobAttemptResponse {
  @ApiProperty({ type: 'integer', minimum: 1 })
  number!: number;
  @ApiProperty({ description: 'The forward record of this attempt: GET /vault-forward/requests/{request_id}.' })
  request_id!: string;
  @ApiTimestamp()
  started_at!: string;
  @ApiProperty({
    type: Number,
    nullable: true,
    minimum: 0,
    description: 'Milliseconds, with fractions. Null while the attempt runs.',
  })
  duration_ms!: number | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 100,
    maximum: 599,
    description: 'The downstream’s status; null when it gave no answer.',
  })
  status!: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Why there was no answer: a problem code such as downstream-unreachable, or outcome-unknown ' +
      '(its worker was lost mid-attempt: whether the downstream got it is not known).',
  })
  error_type!: string | null;
  @ApiTimestamp({ nullable: true, description: 'When the next attempt is due, if this one is retried.' })
  next_attempt_at!: string | null;
}

class ForwardJobStoredResponse {
  @ApiProperty({ type: 'integer', minimum: 100, maximum: 599 })
  status!: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    description:
      'Lower-case names; a repeated header is an array of its values. A compressed answer is stored decoded, ' +
      'without content-encoding or content-length; one that does not decode within the caps (1 MiB, or 100 times ' +
      'its compressed size past 64 KiB; gzip, deflate, br and zstd only) is not stored: its body is empty and ' +
      '`x-vault-forward-not-kept` says why (decision 0137).',
  })
  headers!: Record<string, string | string[]>;
  @ApiPropertyOptional({ description: 'The body when it is valid UTF-8.' })
  body?: string;
  @ApiPropertyOptional({ format: 'byte', description: 'The body otherwise, base64.' })
  body_base64?: string;
}

export class ForwardJobResponse {
  @ApiProperty({ type: String, enum: ['vault-forward-job'] })
  type!: 'vault-forward-job';
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ type: String, enum: JOB_STATUSES })
  status!: JobStatus;
  @ApiProperty({ type: ForwardJobTarget })
  target!: ForwardJobTarget;
  @ApiProperty({ type: String, format: 'uuid', isArray: true })
  payment_method_ids!: string[];
  @ApiProperty({ type: String, format: 'uuid', isArray: true })
  authentication_ids!: string[];
  @ApiProperty({ type: 'integer', minimum: 1, maximum: 20 })
  max_attempts!: number;
  @ApiProperty({ type: [ForwardJobAttemptResponse] })
  attempts!: JobAttempt[];
  @ApiProperty({
    type: ForwardJobStoredResponse,
    nullable: true,
    description:
      'The downstream’s last answer once the job has ended (succeeded, or failed with an answer), kept only while ' +
      'it is needed: 15 minutes after you first have it (this resource read after the job ended, or its callback ' +
      'delivered: a retried read, or a read prompted by the callback, still gets it), and in any case at most ' +
      'FORWARD_JOB_ANSWER_RETENTION (24 hours unless the operator allows up to 7 days) after the job ended. ' +
      'Then null, with `response_erased_at` and `response_erased_reason` saying when and why; `response_status` stays.',
  })
  response!: ForwardJobStoredResponse | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 100,
    maximum: 599,
    description: 'The status of the answer in `response`, kept after the answer is erased; null when there was none.',
  })
  response_status!: number | null;
  @ApiTimestamp({
    nullable: true,
    description: 'When the answer was erased; null while it is kept, or if there was none.',
  })
  response_erased_at!: string | null;
  @ApiProperty({
    type: String,
    enum: RESPONSE_ERASED_REASONS,
    nullable: true,
    description:
      'Why the answer was erased: `received` (15 minutes after you first had it, by a read or the callback), ' +
      '`retention` (FORWARD_JOB_ANSWER_RETENTION after the job ended).',
  })
  response_erased_reason!: ResponseErasedReason | null;
  @ApiProperty({
    type: String,
    format: 'uri',
    nullable: true,
    description: 'Without its query string or fragment, as the target URL: the callback is sent to the whole URL.',
  })
  callback_url!: string | null;
  @ApiTimestamp()
  created_at!: string;
  @ApiTimestamp()
  updated_at!: string;
  @ApiTimestamp({ nullable: true, description: 'null until the job has ended.' })
  finished_at!: string | null;

  static from(this: void, row: ForwardJob, response: StoredResponse | null = null): ForwardJobResponse {
    return {
      type: 'vault-forward-job',
      id: row.id,
      status: row.status,
      target: { method: row.method, url: row.targetUrl },
      payment_method_ids: row.paymentMethodIds,
      authentication_ids: row.authenticationIds,
      max_attempts: row.maxAttempts,
      attempts: row.attempts,
      response: response ? showResponse(response) : null,
      response_status: row.responseStatus,
      response_erased_at: row.responseErasedAt?.toISOString() ?? null,
      response_erased_reason: row.responseErasedReason,
      // Shown as the target is: its query may hold the receiver's token.
      callback_url: row.callbackUrl === null ? null : loggableUrl(row.callbackUrl),
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
      finished_at: row.finishedAt?.toISOString() ?? null,
    };
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function showResponse(stored: StoredResponse): ForwardJobStoredResponse {
  const body = Buffer.from(stored.body_base64, 'base64');
  try {
    return { status: stored.status, headers: stored.headers, body: UTF8.decode(body) };
  } catch {
    return { status: stored.status, headers: stored.headers, body_base64: stored.body_base64 };
  }
}
