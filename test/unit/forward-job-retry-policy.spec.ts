import { backoffMs, MAX_BACKOFF_MS } from '../../src/platform/job-queue/backoff';
import { mayRetry, parseRetryAfter, prefersAsync } from '../../src/modules/forwarding/jobs/attempts/retry-policy';

describe('queued forward retry rules', () => {
  it('retries the listed statuses, never another 4xx; POST/PATCH only with an Idempotency-Key', () => {
    for (const status of [408, 425, 429, 500, 502, 503, 504]) {
      expect(mayRetry({ kind: 'response', status, retryAfterMs: null }, 'PUT', false)).toBe(true);
      expect(mayRetry({ kind: 'response', status, retryAfterMs: null }, 'POST', false)).toBe(false);
      expect(mayRetry({ kind: 'response', status, retryAfterMs: null }, 'PATCH', true)).toBe(true);
    }
    for (const status of [400, 401, 403, 404, 409, 422, 501, 505])
      expect(mayRetry({ kind: 'response', status, retryAfterMs: null }, 'GET', true)).toBe(false);
  });

  it('a connect error is always retried; a mid-request failure of a POST only with a key; a non-retryable problem never', () => {
    expect(mayRetry({ kind: 'error', retryable: true, reached: false }, 'POST', false)).toBe(true);
    expect(mayRetry({ kind: 'error', retryable: true, reached: true }, 'POST', false)).toBe(false);
    expect(mayRetry({ kind: 'error', retryable: true, reached: true }, 'POST', true)).toBe(true);
    expect(mayRetry({ kind: 'error', retryable: true, reached: true }, 'GET', false)).toBe(true);
    expect(mayRetry({ kind: 'error', retryable: false, reached: false }, 'GET', true)).toBe(false);
  });

  it('full jitter under an exponential ceiling capped at 5 minutes; Retry-After honoured up to the cap', () => {
    expect(backoffMs(1, 1000, null, () => 0.999)).toBe(999);
    expect(backoffMs(3, 1000, null, () => 0.5)).toBe(2000);
    expect(backoffMs(1, 1000, null, () => 0)).toBe(0);
    expect(backoffMs(30, 1000, null, () => 0.999999)).toBeLessThan(MAX_BACKOFF_MS);
    expect(backoffMs(1, 1000, 2000)).toBe(2000);
    expect(backoffMs(1, 1000, 3_600_000)).toBe(MAX_BACKOFF_MS);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('2', 0)).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter('soon', 0)).toBeNull();
    expect(parseRetryAfter(undefined, 0)).toBeNull();
    // Whole values only: surrounding spaces are trimmed, digits mixed with anything else are no delay.
    expect(parseRetryAfter(' 2 ', 0)).toBe(2000);
    expect(parseRetryAfter('12', 0)).toBe(12_000);
    expect(parseRetryAfter(['3', '9'], 0)).toBe(3000);
    expect(parseRetryAfter('x5', 0)).toBeNull();
    expect(parseRetryAfter('5x', 0)).toBeNull();
  });

  it('finds respond-async in a Prefer list (RFC 7240), case-insensitive, with values and parameters', () => {
    expect(prefersAsync('respond-async')).toBe(true);
    expect(prefersAsync('wait=10, Respond-Async')).toBe(true);
    expect(prefersAsync(['return=minimal', 'respond-async; foo=bar'])).toBe(true);
    expect(prefersAsync('return="respond-async, x"')).toBe(false);
    expect(prefersAsync('respond-asyncx')).toBe(false);
    expect(prefersAsync('wait=5')).toBe(false);
    expect(prefersAsync(undefined)).toBe(false);
    // A quoted value hides its commas, an escaped quote does not end it.
    expect(prefersAsync('foo="a,respond-async,b"')).toBe(false);
    expect(prefersAsync('foo="a\\",respond-async,b"')).toBe(false);
    expect(prefersAsync('foo="a", respond-async')).toBe(true);
    // The name ends at "=" or ";", whichever comes first.
    expect(prefersAsync('respond-async=1;x')).toBe(true);
    expect(prefersAsync('respond-async;x=1')).toBe(true);
  });
});
