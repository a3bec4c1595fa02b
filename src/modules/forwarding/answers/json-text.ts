/**
 * JSON answers read without losing a digit: an integer JSON cannot hold exactly (a 19-digit card number
 * written as a number) is kept as its source text (JSON.rawJSON), so the rules read it whole and an
 * answer written back prints it as it came.
 */

/** What Node.js 21+ has of the JSON.parse source text access proposal, which TypeScript's lib does not type yet. */
interface JsonWithSource {
  parse(text: string, reviver: (key: string, value: unknown, context: { source?: string }) => unknown): unknown;
  rawJSON(text: string): object;
  isRawJSON(value: unknown): value is { rawJSON: string };
}
const Json = JSON as unknown as JsonWithSource;

/** `text` parsed, unsafe integers kept as raw JSON. Throws SyntaxError as JSON.parse does. */
export function parseJsonExactly(text: string): unknown {
  return Json.parse(text, (_key, value, context) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && context.source && /^-?\d+$/.test(context.source)
      ? Json.rawJSON(context.source)
      : value,
  );
}

/** A scalar's text (a string, a number, an exactly kept integer); null for anything else. */
export function scalarText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return Json.isRawJSON(value) ? value.rawJSON : null;
}
