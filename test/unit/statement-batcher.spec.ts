import { StatementBatcher, textArrayLiteral } from '../../src/platform/database/statement-batcher';

describe('StatementBatcher (group commit of a hot statement)', () => {
  it('runs a lone call at once, and batches the calls made while a statement is in flight', async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const batcher = new StatementBatcher<number, number>({
      one: async (item) => {
        batches.push([item]);
        await new Promise<void>((resolve) => (release = resolve));
        return item * 10;
      },
      many: async (items) => {
        batches.push(items);
        return items.map((item) => item * 10);
      },
    });
    const first = batcher.run(1);
    const rest = [2, 3, 4].map((n) => batcher.run(n));
    expect(batches).toEqual([[1]]);
    release();
    expect(await first).toBe(10);
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('a batch failing for one bad item is re-run item by item: only that item fails', async () => {
    let gate: Promise<void> = Promise.resolve();
    let open: () => void = () => undefined;
    const batcher = new StatementBatcher<number, number>({
      one: async (item) => {
        await gate;
        if (item === 3) throw new Error('constraint');
        return item;
      },
      many: async () => {
        throw new Error('constraint');
      },
    });
    gate = new Promise<void>((resolve) => (open = resolve));
    const first = batcher.run(1);
    const rest = [2, 3, 4].map((n) =>
      batcher.run(n).then(
        (v) => ({ v }),
        (e: Error) => ({ e: e.message }),
      ),
    );
    open();
    await first;
    expect(await Promise.all(rest)).toEqual([{ v: 2 }, { e: 'constraint' }, { v: 4 }]);
  });

  it('an outage fails the whole batch without a retry', async () => {
    let ones = 0;
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const batcher = new StatementBatcher<number, number>({
      isOutage: () => true,
      one: async (item) => {
        ones++;
        await gate;
        return item;
      },
      many: async () => {
        throw new Error('down');
      },
    });
    const first = batcher.run(1);
    const rest = [2, 3].map((n) => batcher.run(n).catch((e: Error) => e.message));
    open();
    await first;
    expect(await Promise.all(rest)).toEqual(['down', 'down']);
    expect(ones).toBe(1);
  });

  describe("with maxDelayMs (the forward records' outcomes)", () => {
    function recording(maxDelayMs: number, fail: (items: number[]) => boolean = () => false) {
      const batches: number[][] = [];
      const write = async (items: number[]) => {
        batches.push(items);
        if (fail(items)) throw new Error('down');
        return items.map(() => undefined);
      };
      const batcher = new StatementBatcher<number, void>({
        many: write,
        one: async (item) => void (await write([item])),
        maxBatch: 3,
        maxDelayMs,
        isOutage: () => true,
      });
      return { batches, batcher };
    }

    it('holds items until the batch is full or flushed, one batch in flight at a time', async () => {
      // A delay no test run reaches: only size and flush can start these batches.
      const { batches, batcher } = recording(3_600_000);
      [1, 2].forEach((n) => batcher.submit(n));
      await new Promise((resolve) => setImmediate(resolve));
      expect(batches).toEqual([]);
      expect(batcher.size).toBe(2);
      batcher.submit(3);
      expect(batches).toEqual([[1, 2, 3]]);
      [4, 5].forEach((n) => batcher.submit(n));
      await batcher.flush();
      expect(batches).toEqual([
        [1, 2, 3],
        [4, 5],
      ]);
      expect(batcher.size).toBe(0);
      await batcher.flush();
      expect(batches).toHaveLength(2);
    });

    it('starts a batch by itself once the delay after its first item is over', async () => {
      const { batches, batcher } = recording(20);
      const done = [batcher.run(1), batcher.run(2)];
      expect(batches).toEqual([]);
      await Promise.all(done);
      expect(batches).toEqual([[1, 2]]);
    });

    it("the delay runs from an item's arrival even while a batch is in flight, not from that batch's end", async () => {
      jest.useFakeTimers();
      try {
        const batches: number[][] = [];
        let open: () => void = () => undefined;
        const gate = new Promise<void>((resolve) => (open = resolve));
        const batcher = new StatementBatcher<number, void>({
          many: async (items) => {
            batches.push(items);
            await gate;
            return items.map(() => undefined);
          },
          one: async (item) => void batches.push([item]),
          maxBatch: 3,
          maxDelayMs: 20,
        });
        const full = [1, 2, 3].map((n) => batcher.run(n));
        const late = batcher.run(4);
        jest.advanceTimersByTime(20); // 4's delay is over while [1, 2, 3] is still in flight
        expect(batches).toEqual([[1, 2, 3]]);
        open();
        await Promise.all(full);
        // Started as [1, 2, 3] ended, with no timer advanced since: a few promise turns, no second delay.
        for (let turn = 0; turn < 10; turn++) await Promise.resolve();
        expect(batches).toEqual([[1, 2, 3], [4]]);
        await late;
      } finally {
        jest.useRealTimers();
      }
    });

    it('retried items wait for their delay, so a flush runs them once and does not loop', async () => {
      const { batches, batcher } = recording(3_600_000);
      batcher.retry([7, 8], 3_600_000);
      batcher.submit(9);
      await batcher.flush();
      expect(batches).toEqual([[7, 8, 9]]);
      batcher.retry([7], 3_600_000);
      await new Promise((resolve) => setImmediate(resolve));
      expect(batches).toHaveLength(1);
      await batcher.flush();
      expect(batches).toEqual([[7, 8, 9], [7]]);
    });
  });

  it('quotes array literal elements', () => {
    expect(textArrayLiteral([])).toBe('{}');
    expect(textArrayLiteral(['a', 'b"c', 'd\\e'])).toBe('{"a","b\\"c","d\\\\e"}');
  });
});
