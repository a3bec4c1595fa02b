import { Timestamp } from '../../src/platform/database/timestamp';

describe('Timestamp (microsecond-exact timestamptz)', () => {
  it.each([
    ['2026-11-20 09:14:03.123456+00', '2026-11-20T09:14:03.123456+00:00'],
    ['2026-11-20 09:14:03.1234+00', '2026-11-20T09:14:03.123400+00:00'],
    ['2026-11-20 09:14:03+00', '2026-11-20T09:14:03.000000+00:00'],
    ['2026-11-20 10:14:03.000001+01', '2026-11-20T09:14:03.000001+00:00'],
    ['2026-11-20 04:44:03.999999-04:30', '2026-11-20T09:14:03.999999+00:00'],
    ['2026-11-20T09:14:03.5Z', '2026-11-20T09:14:03.500000+00:00'],
  ])('parses %s → %s', (input, iso) => {
    expect(Timestamp.parse(input).toISOString()).toBe(iso);
    expect(JSON.stringify({ at: Timestamp.parse(input) })).toBe(`{"at":"${iso}"}`);
  });

  it('round-trips its own output', () => {
    const iso = '2026-01-02T03:04:05.678901+00:00';
    expect(Timestamp.parse(iso).toISOString()).toBe(iso);
  });

  it('orders by microseconds, not only milliseconds', () => {
    const a = Timestamp.parse('2026-11-20 09:14:03.123456+00');
    const b = Timestamp.parse('2026-11-20 09:14:03.123457+00');
    expect(a.compare(b)).toBe(-1);
    expect(b.toEpochMicros() - a.toEpochMicros()).toBe(1n);
  });

  it('refuses what is not a timestamp', () => {
    expect(() => Timestamp.parse('yesterday')).toThrow(RangeError);
  });
});
