/**
 * The functions a placeholder's value may go through (`{{ CARD_NUMBER_1 | raw }}`), docs/placeholders.md
 * "Functions". The scan checks each call (name, arguments) before anything is opened; the fill applies
 * them to a card value. Every function's result is bounded in length, and no message names a value.
 */

/** One argument of a function in a placeholder: `12`, `"MMYY"` or `SECRET.name`. */
export type PlaceholderArgument =
  { kind: 'number'; text: string } | { kind: 'string'; value: string } | { kind: 'secret'; name: string };

/** `| name(arguments)` in a placeholder; `at` is the offset of its name in the text. */
export interface PlaceholderCall {
  name: string;
  args: PlaceholderArgument[];
  at: number;
}

interface FunctionSpec {
  /** The problem with the call's arguments (or its place), or null. */
  check(call: PlaceholderCall, last: boolean): string | null;
  /** The value through the function, or the problem that stops it (a message naming no value). */
  apply(value: string, call: PlaceholderCall, secret?: (name: string) => string): string | { problem: string };
}

const noArguments = (call: PlaceholderCall) => (call.args.length === 0 ? null : `${call.name} takes no arguments`);

const FUNCTIONS: Record<string, FunctionSpec> = {
  // Not a transformation: the value goes in without the body's escaping (see placeholder-encodings.ts).
  raw: {
    check: (call, last) => noArguments(call) ?? (last ? null : 'raw must be the last function'),
    apply: (value) => value,
  },
};

export const FUNCTION_NAMES: readonly string[] = Object.keys(FUNCTIONS);

/** The problem with `call` (unknown function, arguments, place), or null when it may run. */
export function checkCall(call: PlaceholderCall, last: boolean): string | null {
  const spec = Object.hasOwn(FUNCTIONS, call.name) ? FUNCTIONS[call.name] : undefined;
  if (!spec) return `unknown function ${call.name}`;
  return spec.check(call, last);
}

/** `value` through `call`, which checkCall accepted. */
export function applyCall(
  call: PlaceholderCall,
  value: string,
  secret?: (name: string) => string,
): string | { problem: string } {
  return FUNCTIONS[call.name].apply(value, call, secret);
}
