import { waitFor } from '../support/wait';
import { SharedCache } from '../../src/platform/redis/shared-cache';
import {
  DEFAULT_TOKEN_LIFETIME_S,
  HeldToken,
  IssuedToken,
  refreshAt,
  SharedTokenStore,
  TokenCache,
} from '../../src/modules/forwarding/sending/token-cache';

/** A TokenCache on a SharedCache whose notices are collected, with a clock the test moves. */
function setUp() {
  const clock = { now: 1_800_000_000_000 };
  const announced: Array<string | null> = [];
  const store = new SharedCache<HeldToken>('tokens', { max: 100, ttlMs: 24 * 3600_000 }, async (_name, key) => {
    announced.push(key);
  });
  const cache = new TokenCache(store, () => clock.now);
  /** A token endpoint the test answers by hand: each call waits until `issue` (or `fail`) settles it. */
  const calls: Array<{ resolve: (t: IssuedToken) => void; reject: (e: Error) => void }> = [];
  const fetch = () => new Promise<IssuedToken>((resolve, reject) => calls.push({ resolve, reject }));
  /** A token the cache must ask the endpoint for, which answers `accessToken`. */
  const obtain = async (methodId: string, version: string, accessToken: string, expiresInS?: number) => {
    const asked = calls.length;
    const pending = cache.token(methodId, version, fetch, 1000);
    expect(calls).toHaveLength(asked + 1);
    calls[asked].resolve({ accessToken, expiresInS });
    return pending;
  };
  return { clock, announced, store, cache, calls, fetch, obtain };
}

describe('TokenCache', () => {
  it('asks once for many concurrent callers, and they all get that token', async () => {
    const s = setUp();
    const waiting = Array.from({ length: 50 }, () => s.cache.token('m1', '1', s.fetch, 1000));
    expect(s.calls).toHaveLength(1);
    s.calls[0].resolve({ accessToken: 'tok-1', expiresInS: 3600 });
    expect(new Set(await Promise.all(waiting))).toEqual(new Set(['tok-1']));
    expect(await s.cache.token('m1', '1', s.fetch, 1000)).toBe('tok-1');
    expect(s.calls).toHaveLength(1);
  });

  it('each method (and each version of one) has its own token', async () => {
    const s = setUp();
    const a = s.cache.token('m1', '1', s.fetch, 1000);
    const b = s.cache.token('m2', '1', s.fetch, 1000);
    s.calls[0].resolve({ accessToken: 'tok-a', expiresInS: 3600 });
    s.calls[1].resolve({ accessToken: 'tok-b', expiresInS: 3600 });
    expect([await a, await b]).toEqual(['tok-a', 'tok-b']);
    // The method was edited: version 2 never gets version 1's token.
    expect(await s.obtain('m1', '2', 'tok-a2', 3600)).toBe('tok-a2');
  });

  it('drops a token 10 % of its lifetime early, and at most 60 s early', async () => {
    const s = setUp();
    const start = s.clock.now;
    await s.obtain('m1', '1', 'short', 100);
    s.clock.now = start + 89_999;
    expect(await s.cache.token('m1', '1', s.fetch, 1000)).toBe('short');
    s.clock.now = start + 90_000; // 100 s − 10 s
    expect(await s.obtain('m1', '1', 'long', 3600)).toBe('long');
    s.clock.now = start + 90_000 + 3_540_000 - 1; // 3600 s − 60 s (not 360 s)
    expect(await s.cache.token('m1', '1', s.fetch, 1000)).toBe('long');
    s.clock.now += 1;
    void s.cache.token('m1', '1', s.fetch, 1000);
    expect(s.calls).toHaveLength(3);
  });

  it('counts the lifetime from when the request was sent, not from when the answer came', async () => {
    const s = setUp();
    const start = s.clock.now;
    const pending = s.cache.token('m1', '1', s.fetch, 1000);
    s.clock.now = start + 5_000; // the endpoint took 5 s to answer
    s.calls[0].resolve({ accessToken: 'tok', expiresInS: 10 });
    await pending;
    expect(refreshAt(start, 10)).toBe(start + 9_000);
    s.clock.now = start + 9_000;
    void s.cache.token('m1', '1', s.fetch, 1000);
    expect(s.calls).toHaveLength(2);
  });

  it('a token without expires_in lives the documented default', async () => {
    const s = setUp();
    const start = s.clock.now;
    await s.obtain('m1', '1', 'tok');
    expect(DEFAULT_TOKEN_LIFETIME_S).toBe(300);
    s.clock.now = start + 270_000 - 1;
    expect(await s.cache.token('m1', '1', s.fetch, 1000)).toBe('tok');
    s.clock.now = start + 270_000;
    void s.cache.token('m1', '1', s.fetch, 1000);
    expect(s.calls).toHaveLength(2);
  });

  it('a failed request is shared by its waiters and not kept: the next caller asks again', async () => {
    const s = setUp();
    const waiting = [s.cache.token('m1', '1', s.fetch, 1000), s.cache.token('m1', '1', s.fetch, 1000)];
    s.calls[0].reject(new Error('endpoint down'));
    for (const w of waiting) await expect(w).rejects.toThrow('endpoint down');
    expect(await s.obtain('m1', '1', 'tok', 60)).toBe('tok');
  });

  it('a refused token is dropped here and announced to every process; a newer one is not dropped', async () => {
    const s = setUp();
    await s.obtain('m1', '1', 'old', 3600);
    await s.cache.refused('m1', '1', 'old');
    expect(s.announced).toEqual(['m1']);
    expect(await s.obtain('m1', '1', 'new', 3600)).toBe('new');
    // A late 401 to a forward that carried the old token leaves the new one alone.
    await s.cache.refused('m1', '1', 'old');
    expect(s.announced).toEqual(['m1']);
    expect(await s.cache.token('m1', '1', s.fetch, 1000)).toBe('new');
  });

  it('a token obtained while a notice dropped the method is used by its callers but not kept', async () => {
    const s = setUp();
    const pending = s.cache.token('m1', '1', s.fetch, 1000);
    s.store.drop('m1'); // another process announced a change while the request was out
    s.calls[0].resolve({ accessToken: 'raced', expiresInS: 3600 });
    expect(await pending).toBe('raced');
    void s.cache.token('m1', '1', s.fetch, 1000);
    expect(s.calls).toHaveLength(2);
  });

  it('forget drops one method’s token, or every token', async () => {
    const s = setUp();
    for (const id of ['m1', 'm2']) await s.obtain(id, '1', `tok-${id}`, 3600);
    s.cache.forget('m1');
    expect(await s.cache.token('m2', '1', s.fetch, 1000)).toBe('tok-m2');
    void s.cache.token('m1', '1', s.fetch, 1000);
    expect(s.calls).toHaveLength(3);
    s.cache.forget(null);
    void s.cache.token('m2', '1', s.fetch, 1000);
    expect(s.calls).toHaveLength(4);
  });

  describe('with a store shared by other processes', () => {
    /** A shared store written here: a map of what "other processes" stored, and the order of what happened. */
    function shared() {
      const stored = new Map<string, HeldToken>();
      const events: string[] = [];
      let removal: (() => void) | null = null;
      const store: SharedTokenStore = {
        async obtain(methodId, version, fetch) {
          const found = stored.get(`${methodId}@${version}`);
          if (found) return found;
          const held = await fetch();
          stored.set(`${methodId}@${version}`, held);
          return held;
        },
        refused(methodId, version, accessToken) {
          events.push(`shared refused ${accessToken}`);
          return new Promise<void>((resolve) => {
            removal = () => {
              if (stored.get(`${methodId}@${version}`)?.accessToken === accessToken)
                stored.delete(`${methodId}@${version}`);
              resolve();
            };
          });
        },
      };
      return { stored, events, store, remove: () => removal?.() };
    }

    it('uses a token another process stored, without asking the endpoint', async () => {
      const s = setUp();
      const other = shared();
      other.stored.set('m1@1', { version: '1', accessToken: 'theirs', refreshAtMs: s.clock.now + 60_000 });
      const cache = new TokenCache(s.store, () => s.clock.now, other.store);
      expect(await cache.token('m1', '1', s.fetch, 1000)).toBe('theirs');
      expect(await cache.token('m1', '1', s.fetch, 1000)).toBe('theirs');
      expect(s.calls).toHaveLength(0);
    });

    it('a refused token leaves the shared store before the notice, and is not used meanwhile', async () => {
      const s = setUp();
      const other = shared();
      const cache = new TokenCache(s.store, () => s.clock.now, other.store);
      const first = cache.token('m1', '1', s.fetch, 1000);
      s.calls[0].resolve({ accessToken: 'old', expiresInS: 3600 });
      expect(await first).toBe('old');
      const refusal = cache.refused('m1', '1', 'old');
      expect(other.events).toEqual(['shared refused old']);
      // The shared store has not answered yet: no notice, and a forward now waits instead of reusing 'old'.
      const next = cache.token('m1', '1', s.fetch, 1000);
      expect(s.announced).toEqual([]);
      other.remove();
      await refusal;
      expect(s.announced).toEqual(['m1']);
      await waitFor(() => s.calls.length === 2, { timeoutMs: 1000, what: 'a request for a new token' });
      s.calls[1].resolve({ accessToken: 'new', expiresInS: 3600 });
      expect(await next).toBe('new');
      expect(other.stored.get('m1@1')?.accessToken).toBe('new');
    });
  });
});
