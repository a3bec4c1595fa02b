import { StatementBatcher, textArrayLiteral } from '../../src/common/statement-batcher';

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

  it('quotes array literal elements', () => {
    expect(textArrayLiteral([])).toBe('{}');
    expect(textArrayLiteral(['a', 'b"c', 'd\\e'])).toBe('{"a","b\\"c","d\\\\e"}');
  });
});
