/** A time (the Clock's epochMs()) as ISO 8601 with microseconds and +00:00, as the database prints timestamps (Timestamp). */
export function isoMicros(epochMs: number): string {
  const ms = Math.floor(epochMs);
  const micros = Math.min(999, Math.floor((epochMs - ms) * 1000));
  return `${new Date(ms).toISOString().slice(0, -1)}${String(micros).padStart(3, '0')}+00:00`;
}
