/**
 * Whether a queued forward is tried again, as pure functions the processor and the unit tests share; how long
 * it waits is the queue's (platform/job-queue/backoff.ts).
 */

/** Downstream statuses worth another attempt: the downstream's own "not now". */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 425, 429, 500, 502, 503, 504]);

/** Methods whose repetition a downstream may not expect: retried only with an Idempotency-Key, or when nothing reached it. */
const NON_IDEMPOTENT = new Set(['POST', 'PATCH']);

export type AttemptOutcome =
  /** The downstream answered. */
  | { kind: 'response'; status: number; retryAfterMs: number | null }
  /** No answer; `reached` false when nothing of the request can have left (a connect error). */
  | { kind: 'error'; retryable: boolean; reached: boolean };

export function mayRetry(outcome: AttemptOutcome, method: string, hasIdempotencyKey: boolean): boolean {
  if (outcome.kind === 'response') {
    if (!RETRYABLE_STATUSES.has(outcome.status)) return false;
    return !NON_IDEMPOTENT.has(method) || hasIdempotencyKey;
  }
  if (!outcome.retryable) return false;
  if (!outcome.reached) return true;
  return !NON_IDEMPOTENT.has(method) || hasIdempotencyKey;
}

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Whether a Prefer header (RFC 7240) asks for respond-async: a comma-separated list of preferences,
 * each `token [= value] *(; parameter)`, names case-insensitive, values possibly quoted (a quoted
 * comma does not split). One linear pass.
 */
export function prefersAsync(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const text = Array.isArray(header) ? header.join(',') : header;
  let start = 0;
  let quoted = false;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === ',' || i === text.length) {
      if (preferenceName(text.slice(start, i)) === 'respond-async') return true;
      start = i + 1;
    }
  }
  return false;
}

function preferenceName(preference: string): string {
  let end = preference.length;
  const eq = preference.indexOf('=');
  const semi = preference.indexOf(';');
  if (eq >= 0) end = eq;
  if (semi >= 0 && semi < end) end = semi;
  return preference.slice(0, end).trim().toLowerCase();
}
