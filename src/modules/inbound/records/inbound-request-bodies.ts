import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { CAPTURED_BYTES } from '../../forwarding/record-bodies/body-capture';
import { recordedBody } from '../../forwarding/record-bodies/decoded-bodies';
import type { SealedRecord } from '../../vault/envelope';
import { boundAad, SecretSealer } from '../../vault/secret-sealer';
import type { InboundRequest } from './inbound-request.entity';

const PURPOSE = 'inbound-request-bodies';

/** The sealed JSON value: the request as sent to the upstream, the answer as returned, each as recorded. */
export interface OpenedInboundBodies {
  request_body: string | null;
  response_body: string | null;
}

/** A body as it went, with the headers that say what it is (content-type, content-encoding). */
interface Exchanged {
  body: Buffer;
  headers: Readonly<Record<string, string | string[]>>;
}

/** What a record keeps of its bodies: sealed, with their flags and the days they are kept. */
export interface KeptBodies {
  sealed: SealedRecord;
  requestBodyTruncated: boolean;
  responseBodyTruncated: boolean;
  days: number;
}

/**
 * What an inbound request's record keeps of its bodies when its route asks (`record_bodies`, decision 0158), by
 * the forward records' mechanism: each body as forwarding/record-bodies keeps one (decoded, authentication data
 * removed by field name, card numbers masked, 64 KiB), the two sealed as one JSON value bound to the record's
 * merchant and id (SEALED_TABLES: inbound_requests), for the route's days capped by the operator's
 * FORWARD_RECORD_BODY_RETENTION_DAYS, as a config's are (decision 0138).
 */
@Injectable()
export class InboundRequestBodies {
  constructor(
    private readonly sealer: SecretSealer,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Days a route's records keep their bodies; 0: none kept. */
  days(route: { record_bodies: boolean; record_bodies_retention_days: number }): number {
    return route.record_bodies
      ? Math.min(route.record_bodies_retention_days, this.config.forwardRecordBodyRetentionDays)
      : 0;
  }

  /** The bodies of record `id` as kept for `days`; null when none are (no days, or no body got that far). */
  async kept(
    record: { id: string; merchantAccountId: string },
    days: number,
    request: Exchanged | null,
    answer: Exchanged | null,
  ): Promise<KeptBodies | null> {
    if (days === 0 || (request === null && answer === null)) return null;
    const recorded = (exchanged: Exchanged | null, noun: string) =>
      exchanged === null
        ? null
        : recordedBody(exchanged.body.subarray(0, CAPTURED_BYTES), exchanged.body.length, exchanged.headers, { noun });
    const [requestBody, responseBody] = await Promise.all([
      recorded(request, 'request body'),
      recorded(answer, 'answer'),
    ]);
    const opened: OpenedInboundBodies = {
      request_body: requestBody?.text ?? null,
      response_body: responseBody?.text ?? null,
    };
    return {
      sealed: this.sealer.sealJson(boundAad(PURPOSE, record.merchantAccountId, record.id), opened),
      requestBodyTruncated: requestBody?.truncated === true,
      responseBodyTruncated: responseBody?.truncated === true,
      days,
    };
  }

  /** The bodies of a record read with its sealed columns; both null when it has none (not kept, or purged). */
  open(row: InboundRequest): OpenedInboundBodies {
    if (!row.ciphertext || !row.wrappedKey || !row.masterKeyId) return { request_body: null, response_body: null };
    return this.sealer.openJson<OpenedInboundBodies>(
      boundAad(PURPOSE, row.merchantAccountId, row.id),
      { ciphertext: row.ciphertext, wrappedKey: row.wrappedKey, masterKeyId: row.masterKeyId },
      `bodies of inbound request ${row.id}`,
    );
  }
}
