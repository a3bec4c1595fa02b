/** The longest piece of a caller's input that a problem repeats back. */
export const MAX_ECHOED_CHARS = 100;

/**
 * A piece of the caller's input as a problem may repeat it: at most `max` characters, the rest
 * replaced by an ellipsis saying how much was left out. A 1 MiB placeholder name or unknown field
 * must not come back as a 2–4 MiB error (and a log line just as long); the first characters are
 * enough to recognise it. Cut at a code point, never inside a surrogate pair.
 */
export function echoed(input: string, max = MAX_ECHOED_CHARS): string {
  if (input.length <= max) return input;
  let end = max;
  const last = input.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${input.slice(0, end)}… (${input.length - end} more characters)`;
}
