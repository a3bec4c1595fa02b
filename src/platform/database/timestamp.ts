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
    /** The ISO form, once made (a list prints every row's timestamps; they never change). */
    private iso?: string,
  ) {}

  // 2026-11-20 09:14:03.123456+00 / +05:30 / -03:00:00 (PostgreSQL's ISO output); 'T' tolerated too.
  private static readonly PATTERN =
    /^(\d{4,}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?(Z|[+-]\d\d(?::?\d\d(?::?\d\d)?)?)$/;

  static parse(text: string): Timestamp {
    return Timestamp.parseUtc(text) ?? Timestamp.parseAny(text);
  }

  /**
   * What PostgreSQL prints on our connections (time zone UTC): `YYYY-MM-DD HH:MM:SS[.f…]+00`, years
   * 1000–9999, read by position — every listed row has two, and the general parse below was a list's
   * largest item of its own (docs/benchmarks.md). Anything else (another offset, a year out of that
   * range, a date that does not exist) is left to the general parse, read exactly as before this path.
   */
  private static parseUtc(text: string): Timestamp | null {
    const end = text.length - 3;
    if (end < 19 || !text.endsWith('+00') || text[4] !== '-' || text[7] !== '-') return null;
    if ((text[10] !== ' ' && text[10] !== 'T') || text[13] !== ':' || text[16] !== ':') return null;
    const year = digitsAt(text, 0, 4);
    const month = digitsAt(text, 5, 2);
    const day = digitsAt(text, 8, 2);
    const hour = digitsAt(text, 11, 2);
    const minute = digitsAt(text, 14, 2);
    const second = digitsAt(text, 17, 2);
    let fraction = '000000';
    if (end > 19) {
      if (text[19] !== '.' || end - 20 > 6 || end - 20 < 1) return null;
      fraction = text.slice(20, end).padEnd(6, '0');
      if (digitsAt(fraction, 0, 6) < 0) return null;
    }
    if (year < 1000 || month < 1 || month > 12 || day < 1 || Math.min(hour, minute, second) < 0) return null;
    if (hour > 23 || minute > 59 || second > 59) return null;
    if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
    const millis = Date.UTC(year, month - 1, day, hour, minute, second, Number(fraction.slice(0, 3)));
    const iso = `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction}+00:00`;
    return new Timestamp(millis, Number(fraction.slice(3)), iso);
  }

  private static parseAny(text: string): Timestamp {
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
    if (this.iso === undefined) {
      const iso = new Date(this.epochMillis).toISOString(); // ...T09:14:03.123Z
      this.iso = `${iso.slice(0, -1)}${String(this.micros).padStart(3, '0')}+00:00`;
    }
    return this.iso;
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

/** The number written by `length` ASCII digits of `text` from `start`, or -1 if one is not a digit. */
function digitsAt(text: string, start: number, length: number): number {
  let value = 0;
  for (let i = start; i < start + length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}
