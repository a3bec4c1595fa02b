import {
  HELD_WRITE_FIRST_MS,
  HELD_WRITE_MAX_MS,
  HeldWrites,
  nextHeldWriteWaitMs,
  untilDatabaseTakes,
} from '../../src/platform/database/held-writes';

/** What node-postgres throws when the server's socket is gone: the database away, not a refusal. */
function databaseAway(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
}

describe('durable writes held until the database takes them (platform/database/held-writes.ts)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('waits 250 ms, then twice as long each time, up to 5 s', () => {
    const waits: number[] = [];
    for (let wait = 0, i = 0; i < 8; i++) waits.push((wait = nextHeldWriteWaitMs(wait)));
    expect(waits).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
    expect([waits[0], waits.at(-1)]).toEqual([HELD_WRITE_FIRST_MS, HELD_WRITE_MAX_MS]);
  });

  it('untilDatabaseTakes tries a write again while the database is away, and returns what it answers', async () => {
    let calls = 0;
    const write = jest.fn(async () => {
      if (++calls < 3) throw databaseAway();
      return 'taken';
    });
    const result = untilDatabaseTakes(write);
    await jest.advanceTimersByTimeAsync(HELD_WRITE_FIRST_MS);
    expect(write).toHaveBeenCalledTimes(2);
    await jest.advanceTimersByTimeAsync(2 * HELD_WRITE_FIRST_MS);
    await expect(result).resolves.toBe('taken');
    expect(write).toHaveBeenCalledTimes(3);
  });

  it('untilDatabaseTakes gives any other error back at once, and every error once stopped', async () => {
    const refused = Object.assign(new Error('duplicate key'), { code: '23505' });
    await expect(untilDatabaseTakes(() => Promise.reject(refused))).rejects.toBe(refused);

    const away = databaseAway();
    await expect(untilDatabaseTakes(() => Promise.reject(away), { stopped: () => true })).rejects.toBe(away);

    // `alsoWhen` widens what is waited out (the key store away, say).
    class KeyStoreAway extends Error {}
    let calls = 0;
    const held = untilDatabaseTakes(
      async () => {
        if (++calls === 1) throw new KeyStoreAway();
        return calls;
      },
      { alsoWhen: (error) => error instanceof KeyStoreAway },
    );
    await jest.advanceTimersByTimeAsync(HELD_WRITE_FIRST_MS);
    await expect(held).resolves.toBe(2);
  });

  it('HeldWrites writes every held key in one batch once the database takes it, and stops trying when closed', async () => {
    const batches: string[][] = [];
    let away = true;
    const held = new HeldWrites(
      'test releases',
      async (keys) => {
        batches.push(keys);
        if (away) throw databaseAway();
      },
      10,
    );
    held.hold('a');
    held.hold('b');
    await jest.advanceTimersByTimeAsync(HELD_WRITE_FIRST_MS);
    expect(batches).toEqual([['a', 'b']]);
    away = false;
    held.hold('c');
    await jest.advanceTimersByTimeAsync(2 * HELD_WRITE_FIRST_MS);
    expect(batches).toEqual([
      ['a', 'b'],
      ['a', 'b', 'c'],
    ]);
    expect(held.size).toBe(0);

    held.hold('d');
    held.close();
    await jest.advanceTimersByTimeAsync(HELD_WRITE_MAX_MS);
    expect(batches).toHaveLength(2);
  });

  it('HeldWrites closed during a try does not try again; a later hold starts again', async () => {
    const batches: string[][] = [];
    let release: () => void = () => undefined;
    const held = new HeldWrites(
      'test releases',
      (keys) => {
        batches.push(keys);
        return new Promise<void>((_, reject) => (release = () => reject(databaseAway())));
      },
      10,
    );
    held.hold('a');
    await jest.advanceTimersByTimeAsync(HELD_WRITE_FIRST_MS);
    expect(batches).toEqual([['a']]);
    held.close();
    release();
    await jest.advanceTimersByTimeAsync(HELD_WRITE_MAX_MS);
    expect(batches).toEqual([['a']]);
    held.hold('b');
    await jest.advanceTimersByTimeAsync(HELD_WRITE_MAX_MS);
    expect(batches).toEqual([['a'], ['a', 'b']]);
  });

  it('HeldWrites keeps at most its bound, dropping the oldest', async () => {
    const batches: string[][] = [];
    const held = new HeldWrites('test releases', async (keys) => void batches.push(keys), 2);
    held.hold('a');
    held.hold('b');
    held.hold('c');
    expect(held.size).toBe(2);
    await jest.advanceTimersByTimeAsync(HELD_WRITE_FIRST_MS);
    expect(batches).toEqual([['b', 'c']]);
  });
});
