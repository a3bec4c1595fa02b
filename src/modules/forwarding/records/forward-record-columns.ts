/**
 * A batch of forward records as the parameters of the records' statements (forward-records.service.ts):
 * one row's values in COLUMNS' order, or one array per column for unnest().
 */
import type { ForwardRecord } from './forward-record';
import { bodyColumns } from './sealed-bodies';

const COLUMN_COUNT = 15;

/** One row per id: ON CONFLICT DO UPDATE may not touch a row twice in one statement. */
export function latestById(records: ForwardRecord[]): ForwardRecord[] {
  if (records.length < 2) return records;
  return [...new Map(records.map((r) => [r.id, r])).values()];
}

/** One record's values, in COLUMNS' order. Arrays of arrays do not fit unnest(): the id lists travel as text. */
export function values(r: ForwardRecord): unknown[] {
  return [
    r.id,
    r.merchantAccountId,
    r.configId ?? null,
    r.method ?? null,
    r.targetUrl ?? null,
    r.status ?? null,
    r.durationMs ?? null,
    `{${r.paymentMethodIds.join(',')}}`,
    `{${r.authenticationIds.join(',')}}`,
    r.errorType ?? null,
    r.spooledAt ?? null,
    r.checkoutSessionId ?? null,
    r.merchantInitiated === true,
    r.apiKeyId ?? null,
    `{${(r.filledFields ?? []).join(',')}}`,
  ];
}

/** The same values as columns, one array per column, for unnest(). */
export function columns(batch: ForwardRecord[]): unknown[] {
  const rows = batch.map(values);
  return Array.from({ length: COLUMN_COUNT }, (_, column) => rows.map((row) => row[column]));
}

/** UPSERT_FINAL's parameters: the common columns, whether each record released card data, and its bodies. */
export function finalColumns(batch: ForwardRecord[]): unknown[] {
  return [...columns(batch), batch.map((r) => r.disclosed === true), ...bodyColumns(batch)];
}
