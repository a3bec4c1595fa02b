import { execFileSync } from 'node:child_process';
import Redis from 'ioredis';
import { withTimeout } from '../../src/platform/time/with-timeout';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../../src/platform/problem/database-errors';

const never = () => new Promise<never>(() => undefined);
const later = <T>(ms: number, settle: () => T) =>
  new Promise<Awaited<T>>((resolve) => setTimeout(() => resolve(settle() as Awaited<T>), ms));

describe('withTimeout (the one bound on waits: queue engines, health checks, forward-record commits)', () => {
  it('answers what the promise answers within the bound', async () => {
    await expect(withTimeout(Promise.resolve(7), 50)).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('refused')), 50)).rejects.toThrow('refused');
  });

  it('rejects with "no answer within <ms> ms" by default', async () => {
    await expect(withTimeout(never(), 10)).rejects.toThrow(new Error('no answer within 10 ms'));
  });

  it("rejects with the caller's error when given one (the forward records' commit bound: database unavailable)", async () => {
    const error = await withTimeout(never(), 10, () => new DatabaseUnavailableError('no commit within 10 ms')).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect((error as Error).message).toBe('no commit within 10 ms');
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it('leaves a late rejection of the promise handled (no unhandled rejection)', async () => {
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const work = later(20, () => Promise.reject(new Error('late')));
      await expect(withTimeout(work, 5)).rejects.toThrow('no answer within 5 ms');
      await new Promise((resolve) => setTimeout(resolve, 40));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it('clears its timer when the promise settles first', async () => {
    const clear = jest.spyOn(global, 'clearTimeout');
    try {
      await withTimeout(Promise.resolve(1), 60_000);
      expect(clear).toHaveBeenCalled();
    } finally {
      clear.mockRestore();
    }
  });

  it('takes an answer that arrived while the event loop was blocked past the bound for an answer', async () => {
    const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const redis = new Redis(url, { maxRetriesPerRequest: 1 });
    try {
      await redis.ping();
      const answer = withTimeout(redis.echo('in time'), 1);
      // Blocks this event loop for a whole round trip of another client: Redis answers in order, so the reply
      // to the ECHO sent before it is in this socket when the loop runs again, and the 1 ms timer is due too.
      execFileSync('redis-cli', ['-u', url, 'ping']);
      await expect(answer).resolves.toBe('in time');
    } finally {
      redis.disconnect();
    }
  });
});
