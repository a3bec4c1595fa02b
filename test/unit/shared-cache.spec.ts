import { SharedCache } from '../../src/platform/redis/shared-cache';

describe('SharedCache', () => {
  const announced: Array<[string, string | null]> = [];
  const cache = () =>
    new SharedCache<string>(
      'things',
      { max: 10, ttlMs: 60_000 },
      async (name, key) => void announced.push([name, key]),
    );

  beforeEach(() => (announced.length = 0));

  it('keeps what was loaded, and drops it locally and for everyone on invalidate', async () => {
    const c = cache();
    c.set('a', 'A', c.snapshot());
    expect(c.get('a')).toBe('A');
    await c.invalidate('a');
    expect(c.get('a')).toBeUndefined();
    expect(announced).toEqual([['things', 'a']]);
    c.set('b', 'B', c.snapshot());
    await c.invalidateAll();
    expect(c.get('b')).toBeUndefined();
    expect(announced).toEqual([
      ['things', 'a'],
      ['things', null],
    ]);
  });

  it('does not store a value read before an invalidation that arrived while it was being read', () => {
    const c = cache();
    const before = c.snapshot();
    c.drop('a'); // a notice from another process lands while the query runs
    c.set('a', 'stale', before);
    expect(c.get('a')).toBeUndefined();
    c.set('a', 'fresh', c.snapshot());
    expect(c.get('a')).toBe('fresh');
  });

  it('reads through: cached ids from memory, the rest in one load, cached unless a notice raced it', async () => {
    const c = cache();
    const loads: string[][] = [];
    const load = async (missing: string[]) => {
      loads.push(missing);
      return missing.filter((id) => id !== 'absent').map((id) => [id, id.toUpperCase()] as const);
    };
    const first = await c.readThrough(['a', 'b', 'absent'], (id) => `m:${id}`, load);
    expect([...first]).toEqual([
      ['a', 'A'],
      ['b', 'B'],
    ]);
    const second = await c.readThrough(['a', 'b', 'c'], (id) => `m:${id}`, load);
    expect([...second.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect(loads).toEqual([['a', 'b', 'absent'], ['c']]);

    const raced = await c.readThrough(
      ['d'],
      (id) => `m:${id}`,
      async (missing) => {
        c.drop('m:x'); // a notice lands while the query runs
        return missing.map((id) => [id, 'stale'] as const);
      },
    );
    expect(raced.get('d')).toBe('stale'); // this caller gets what it read…
    expect(c.get('m:d')).toBeUndefined(); // …but it is not kept
  });
});
