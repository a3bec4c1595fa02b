import { execFileSync } from 'node:child_process';

/** Every row of the database at `url` as `pg_dump --data-only` writes it: what a reader of the raw rows sees. */
export function dataDump(url: string): string {
  return execFileSync('pg_dump', ['--data-only', url], { maxBuffer: 256 * 1024 * 1024 }).toString('utf8');
}

/** Every string in a parsed JSON value (log lines, span attributes): escapes undone, as a reader sees them. */
export function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') {
    try {
      const inner: unknown = JSON.parse(value);
      if (inner !== null && typeof inner === 'object') return [value, ...stringsOf(inner)];
    } catch {
      /* not JSON */
    }
    return [value];
  }
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
  return [];
}

/** The lines of a log text, parsed where they are JSON, whole otherwise. */
export function logStrings(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [line, ...stringsOf(JSON.parse(line))];
      } catch {
        return [line];
      }
    });
}
