import { jitteredMs } from '../../src/platform/time/jitter';
import { DatabaseUnavailableError } from '../../src/platform/problem/database-errors';
import { backoffMs, PutOff, putOffDelay, RetryAttempt, retryBackoff } from '../../src/platform/job-queue/backoff';

describe('the one jitter formula (issue 21, item 6)', () => {
  it('draws a whole number of milliseconds uniformly from [floor, ceiling)', () => {
    expect(jitteredMs(0, 1000, () => 0)).toBe(0);
    expect(jitteredMs(0, 1000, () => 0.5)).toBe(500);
    expect(jitteredMs(0, 1000, () => 0.9999)).toBe(999);
    expect(jitteredMs(2000, 4000, () => 0)).toBe(2000);
    expect(jitteredMs(2000, 4000, () => 0.9999)).toBe(3999);
  });

  it('is what the backoff between attempts draws from: full jitter below the exponential ceiling', () => {
    for (const r of [0, 0.25, 0.999]) expect(backoffMs(3, 1000, null, () => r)).toBe(jitteredMs(0, 4000, () => r));
  });

  it('puts a job off 2–4 s when its handler found the database down, and not for any other error', () => {
    const retryLater = putOffDelay;
    const random = jest.spyOn(Math, 'random');
    try {
      random.mockReturnValue(0);
      expect(retryLater(new DatabaseUnavailableError('down'))).toBe(2000);
      random.mockReturnValue(0.9999);
      expect(retryLater(new DatabaseUnavailableError('down'))).toBe(3999);
      expect(retryLater(new Error('a bug'))).toBeNull();
      // A handler's own put-off (a live lease elsewhere, a next attempt not due) keeps its delay.
      expect(retryLater(new PutOff(1_234))).toBe(1_234);
    } finally {
      random.mockRestore();
    }
  });

  it("is BullMQ's one backoff strategy: the delay a retried attempt carries, else the backoff between attempts", () => {
    const strategy = retryBackoff(1000);
    expect(strategy(2, 'vault-retry', new RetryAttempt(7_000))).toBe(7_000);
    const random = jest.spyOn(Math, 'random');
    try {
      random.mockReturnValue(0.5);
      expect(strategy(3, 'vault-retry', new Error('a bug'))).toBe(backoffMs(3, 1000, null, () => 0.5));
    } finally {
      random.mockRestore();
    }
  });
});
