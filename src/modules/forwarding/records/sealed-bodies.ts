/**
 * A forward record's redacted bodies at rest (decision 0104): the request headers, request body and
 * answer as one JSON value sealed with SecretSealer, bound to the record's merchant and id (listed in
 * SEALED_TABLES, so `vault rotate-keys` re-wraps it), the truncation flags beside it in the clear.
 */
import { boundAad, SecretSealer } from '../../vault/secret-sealer';
import type { ForwardRecord, SealedBodies } from './forward-record';
import type { ForwardRecordEntity } from './forward-record.entity';

const PURPOSE = 'forward-record-bodies';

/** The sealed JSON value. */
export interface OpenedBodies {
  request_headers: Record<string, string> | null;
  request_body: string | null;
  response_body: string | null;
}

/** The record's bodies sealed (base64, so that a spool line carries them as they are written). */
export function sealBodies(sealer: SecretSealer, record: ForwardRecord): SealedBodies {
  const bodies = record.bodies!;
  const plaintext: OpenedBodies = {
    request_headers: bodies.requestHeaders ?? null,
    request_body: bodies.requestBody ?? null,
    response_body: bodies.responseBody ?? null,
  };
  return {
    ...sealer.sealJsonText(boundAad(PURPOSE, record.merchantAccountId, record.id), plaintext),
    requestBodyTruncated: bodies.requestBodyTruncated === true,
    responseBodyTruncated: bodies.responseBodyTruncated === true,
    retentionDays: bodies.retentionDays,
  };
}

/** The bodies of a row read with its sealed columns; all null when it has none (not recorded, or purged). */
export function openBodies(sealer: SecretSealer, row: ForwardRecordEntity): OpenedBodies {
  if (!row.ciphertext || !row.wrappedKey || !row.masterKeyId) {
    return { request_headers: null, request_body: null, response_body: null };
  }
  return sealer.openJson<OpenedBodies>(
    boundAad(PURPOSE, row.merchantAccountId, row.id),
    { ciphertext: row.ciphertext, wrappedKey: row.wrappedKey, masterKeyId: row.masterKeyId },
    `bodies of forward record ${row.id}`,
  );
}

/** The outcome statements' body parameters: sealed parts (base64) and flags, null where a record has none. */
export function bodyColumns(batch: ForwardRecord[]): unknown[] {
  return [
    batch.map((r) => r.sealedBodies?.ciphertext ?? null),
    batch.map((r) => r.sealedBodies?.wrappedKey ?? null),
    batch.map((r) => r.sealedBodies?.masterKeyId ?? null),
    batch.map((r) => r.sealedBodies?.requestBodyTruncated === true),
    batch.map((r) => r.sealedBodies?.responseBodyTruncated === true),
    batch.map((r) => (r.sealedBodies ? (r.sealedBodies.retentionDays ?? null) : null)),
  ];
}
