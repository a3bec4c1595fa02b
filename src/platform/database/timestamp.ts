/**
 * A `timestamptz` value with its full microsecond precision.
 *
 * JavaScript's Date holds milliseconds only, so a Date round trip silently truncates the database's
 * value: the API would print `.123000` where the row holds `.123456`, and a keyset cursor built from
 * it would skip or repeat rows. The pg connection is configured (see `pgTypes` in data-source.ts) to
 * hand every timestamptz to us as this class instead of a Date; TypeORM passes non-string, non-Date
 * values through untouched. It serialises to ISO 8601 with six fractional digits and an explicit
 * `+00:00` offset, and goes back into SQL as the same string, which PostgreSQL parses exactly.
 */
export class Timestamp {
  private constructor(
    /** Milliseconds since the epoch, whole milliseconds only. */
    private readonly epochMillis: number,
    /** The three digits below the millisecond, 0–999. */
    private readonly micros: number,
  ) {}

  // 2026-11-20 09:14:03.123456+00 / +05:30 / -03:00:00 (PostgreSQL's ISO output); 'T' tolerated too.
  private static readonly PATTERN =
    /^(\d{4,}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?(Z|[+-]\d\d(?::?\d\d(?::?\d\d)?)?)$/;

  static parse(text: string): Timestamp {
    const match = Timestamp.PATTERN.exec(text);
    if (!match) throw new RangeError(`not a timestamptz value: ${JSON.stringify(text)}`);
    const [, date, time, fraction = '', offsetRaw] = match;
    const digits = fraction.padEnd(6, '0');
    const millis = Date.parse(`${date}T${time}.${digits.slice(0, 3)}${Timestamp.normaliseOffset(offsetRaw)}`);
    if (Number.isNaN(millis)) throw new RangeError(`not a timestamptz value: ${JSON.stringify(text)}`);
    return new Timestamp(millis, Number(digits.slice(3)));
  }

  /** Date.parse accepts ±HH:MM only; PostgreSQL may print ±HH, ±HHMM or ±HH:MM:SS. */
  private static normaliseOffset(offset: string): string {
    if (offset === 'Z') return 'Z';
    const sign = offset[0];
    const parts = offset.slice(1).replace(/:/g, '');
    const hours = parts.slice(0, 2);
    const minutes = parts.slice(2, 4) || '00';
    if (parts.length > 4 && Number(parts.slice(4)) !== 0) {
      // Only pre-1900 local mean times have second offsets; we store and print UTC only.
      throw new RangeError('timestamptz offsets with seconds are not supported');
    }
    return `${sign}${hours}:${minutes}`;
  }

  /** ISO 8601 in UTC with microseconds: `2026-11-20T09:14:03.123456+00:00`. */
  toISOString(): string {
    const iso = new Date(this.epochMillis).toISOString(); // ...T09:14:03.123Z
    return `${iso.slice(0, -1)}${String(this.micros).padStart(3, '0')}+00:00`;
  }

  toJSON(): string {
    return this.toISOString();
  }

  toString(): string {
    return this.toISOString();
  }

  /** Microseconds since the epoch, exact (a bigint, since it exceeds 2^53 in a few centuries). */
  toEpochMicros(): bigint {
    return BigInt(this.epochMillis) * 1000n + BigInt(this.micros);
  }

  compare(other: Timestamp): number {
    const a = this.toEpochMicros();
    const b = other.toEpochMicros();
    return a < b ? -1 : a > b ? 1 : 0;
  }
}
