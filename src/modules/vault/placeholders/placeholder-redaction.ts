/**
 * The redacted form of a filled text (decision 0104): the same walk as the fill (placeholders.ts), the
 * same branches of its `{% if %}` blocks, but each placeholder's own text (`{{ CARD_NUMBER_1 }}`, with
 * its functions) where the fill inserts its value. Nothing filled is ever in it, by construction: the
 * filled result is never searched.
 */
import type { PlaceholderMatch } from './placeholder-grammar';
import { type PlaceholderScan, walk } from './placeholders';

/**
 * The redacted form of `source` (the bytes `scan` was made of, read as latin1): its first `keep` bytes
 * and its whole length. `truthy` tells, for an `{% if %}`, the branch the fill took.
 */
export function redactedBytes(
  source: Buffer,
  scan: PlaceholderScan,
  truthy: (match: PlaceholderMatch) => boolean,
  keep: number,
): { head: Buffer; total: number } {
  if (scan.matches.length === 0) return { head: source.subarray(0, keep), total: source.length };
  // Every byte written is a byte of `source` (its text outside the placeholders, or a placeholder's own text), each
  // used once: the redacted form is never longer than the template, so a short body allocates no 64 KiB.
  const head = Buffer.allocUnsafe(Math.min(keep, source.length));
  let held = 0;
  let total = 0;
  const put = (from: number, to: number) => {
    total += to - from;
    if (held < head.length) held += source.copy(head, held, from, Math.min(to, from + head.length - held));
  };
  walk(scan, truthy, { copy: put, value: (m) => put(m.open, m.end) });
  return { head: head.subarray(0, held), total };
}

/** The redacted form of a scanned text (a header value): see redactedBytes. */
export function redactedText(scan: PlaceholderScan, truthy: (match: PlaceholderMatch) => boolean): string {
  const { text } = scan;
  if (scan.matches.length === 0) return text;
  let out = '';
  walk(scan, truthy, {
    copy: (from, to) => (out += text.slice(from, to)),
    value: (m) => (out += text.slice(m.open, m.end)),
  });
  return out;
}
