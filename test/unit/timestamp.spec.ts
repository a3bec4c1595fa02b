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

  it.each([
    '2026-13-01 00:00:00+00',
    '2026-11-20 09:1x:03+00',
    '2026-11-20 09:14:03.+00',
    '2026-11-20 09:14:03.1234567+00',
  ])('refuses %s, read by position or not', (text) => {
    expect(() => Timestamp.parse(text)).toThrow(RangeError);
  });

  it('reads PostgreSQL’s UTC output by position exactly as the general parse reads the same instant', () => {
    // A deterministic spread of instants over 1000–9999, each printed as PostgreSQL does on our connections
    // (space, 0–6 fraction digits with trailing zeros dropped, "+00") and as ISO with "+00:00" (the general parse).
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    for (let i = 0; i < 2_000; i++) {
      const millis = Date.UTC(1000, 0, 1) + (next() / 2 ** 31) * (Date.UTC(9999, 11, 31) - Date.UTC(1000, 0, 1));
      const iso = new Date(Math.floor(millis)).toISOString();
      const fraction = `${iso.slice(20, 23)}${String(next() % 1000).padStart(3, '0')}`.replace(/0+$/, '');
      const postgres = `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''}+00`;
      const general = Timestamp.parse(`${iso.slice(0, 19)}.${fraction.padEnd(6, '0')}+00:00`);
      const fast = Timestamp.parse(postgres);
      expect([postgres, fast.toISOString(), fast.toEpochMicros()]).toEqual([
        postgres,
        general.toISOString(),
        general.toEpochMicros(),
      ]);
    }
  });
});
