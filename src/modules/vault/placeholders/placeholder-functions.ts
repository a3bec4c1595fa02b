/**
 * The functions a placeholder's value may go through (`{{ CARD_NUMBER_1 | last4 }}`), docs/placeholders.md
 * "Functions". The scan checks each call (name, arguments, place) before anything is opened; the fill
 * applies them to a card value. Every result is bounded in length, and no message names a value.
 */
import { createHash, createHmac, createSecretKey } from 'node:crypto';

/** One argument of a function in a placeholder: `12`, `"MMYY"` or `SECRET.name`. */
export type PlaceholderArgument =
  { kind: 'number'; text: string } | { kind: 'string'; value: string } | { kind: 'secret'; name: string };

/** `| name(arguments)` in a placeholder; `at` is the offset of its name in the text. */
export interface PlaceholderCall {
  name: string;
  args: PlaceholderArgument[];
  at: number;
}

/** Where a call stands: its index among the expression's calls, how many there are, the NAMEs it reads. */
export interface CallContext {
  index: number;
  count: number;
  /** The placeholder names (NAME of NAME_X) of the expression's alternatives. */
  names: readonly string[];
}

/** Template secrets by name (`SECRET.name`), as the forward's listed methods hold them (decision 0102). */
export type TemplateSecrets = ReadonlyMap<string, Buffer>;

interface FunctionSpec {
  /** The problem with the call's arguments (or its place), or null. */
  check(call: PlaceholderCall, context: CallContext): string | null;
  /** The value through the function (checked arguments; a secret it names is in `secrets`). */
  apply(value: string, call: PlaceholderCall, secrets: TemplateSecrets): string;
}

/** At most this many functions in one placeholder: each may grow the value, and the fill computes every one. */
export const MAX_CALLS = 8;
/** The longest value a function may produce (a name is at most 200 characters; hex doubles it). */
export const MAX_VALUE_LENGTH = 4096;
const MAX_PAD = 64;

const noArguments = (call: PlaceholderCall) => (call.args.length === 0 ? null : `${call.name} takes no arguments`);

/** An integer argument in [min, max], or a problem. */
function integer(call: PlaceholderCall, index: number, min: number, max: number): string | null {
  const arg = call.args[index];
  if (arg?.kind !== 'number' || arg.text.length > 3 || Number(arg.text) < min || Number(arg.text) > max)
    return `${call.name}: argument ${index + 1} must be a whole number from ${min} to ${max}`;
  return null;
}

const numberArg = (call: PlaceholderCall, index: number, fallback: number) => {
  const arg = call.args[index];
  return arg?.kind === 'number' ? Number(arg.text) : fallback;
};

const stringArg = (call: PlaceholderCall, index: number) => {
  const arg = call.args[index];
  return arg?.kind === 'string' ? arg.value : '';
};

const DATE_PARTS = ['YYYY', 'YY', 'MM', 'M'] as const;
const DATE_SEPARATORS = '/-. ';

/** A date format split into its parts (YYYY, YY, MM, M and single separators), or null. */
function dateFormat(format: string): string[] | null {
  const parts: string[] = [];
  let i = 0;
  while (i < format.length) {
    const part = DATE_PARTS.find((p) => format.startsWith(p, i));
    if (part) {
      parts.push(part);
      i += part.length;
    } else if (DATE_SEPARATORS.includes(format[i])) {
      parts.push(format[i++]);
    } else {
      return null;
    }
  }
  return parts.length > 0 ? parts : null;
}

const FUNCTIONS: Record<string, FunctionSpec> = {
  // Not a transformation: the value goes in without the body's escaping (see placeholder-encodings.ts).
  raw: {
    check: (call, { index, count }) =>
      noArguments(call) ?? (index === count - 1 ? null : 'raw must be the last function'),
    apply: (value) => value,
  },
  base64: { check: noArguments, apply: (value) => Buffer.from(value, 'utf8').toString('base64') },
  hex: { check: noArguments, apply: (value) => Buffer.from(value, 'utf8').toString('hex') },
  sha256: { check: noArguments, apply: (value) => createHash('sha256').update(value, 'utf8').digest('hex') },
  // Lower-case hex of HMAC-SHA256 over the value's UTF-8 bytes, keyed with the secret's bytes: always 64 characters.
  hmac_sha256: {
    check: (call) =>
      call.args.length === 1 && call.args[0].kind === 'secret'
        ? null
        : 'hmac_sha256 takes one secret: hmac_sha256(SECRET.name)',
    apply: (value, call, secrets) =>
      // A KeyObject, not the Buffer: Node.js 24 checks a Buffer key at ~25 µs a call (docs/decisions/0105).
      createHmac('sha256', createSecretKey(secrets.get(secretName(call))!))
        .update(value, 'utf8')
        .digest('hex'),
  },
  // By code point, so a name is never cut inside a surrogate pair; a shorter value is kept whole.
  last4: { check: noArguments, apply: (value) => Array.from(value).slice(-4).join('') },
  bin: {
    check: (call) => {
      if (call.args.length === 0) return null;
      const [length] = call.args;
      return call.args.length === 1 && length.kind === 'number' && ['6', '8'].includes(length.text)
        ? null
        : 'bin takes no argument (6 digits), 6 or 8';
    },
    apply: (value, call) =>
      Array.from(value)
        .slice(0, numberArg(call, 0, 6))
        .join(''),
  },
  pad_left: {
    check: (call) => {
      if (call.args.length !== 2) return 'pad_left takes a length and one character: pad_left(n, "0")';
      const problem = integer(call, 0, 1, MAX_PAD);
      if (problem) return problem;
      const fill = call.args[1];
      return fill.kind === 'string' && Array.from(fill.value).length === 1
        ? null
        : 'pad_left: argument 2 must be one character in quotes';
    },
    apply: (value, call) => {
      const missing = numberArg(call, 0, 0) - Array.from(value).length;
      return missing > 0 ? stringArg(call, 1).repeat(missing) + value : value;
    },
  },
  // The expiry (stored MM/YY) in another format: its only input is CARD_EXPIRATION_DATE_X, checked by the scan.
  date: {
    check: (call, { index, names }) => {
      if (call.args.length !== 1 || call.args[0].kind !== 'string' || call.args[0].value.length > 32)
        return 'date takes one format in quotes, e.g. date("MMYY")';
      if (!dateFormat(call.args[0].value)) return 'date: the format may hold only YYYY, YY, MM, M and / - . or space';
      if (index !== 0 || names.some((n) => n !== 'CARD_EXPIRATION_DATE'))
        return 'date applies only to CARD_EXPIRATION_DATE_X, as the first function';
      return null;
    },
    apply: (value, call) => {
      const [mm, yy] = value.split('/');
      const parts: Record<string, string> = { YYYY: `20${yy}`, YY: yy, MM: mm, M: String(Number(mm)) };
      return dateFormat(stringArg(call, 0))!
        .map((p) => parts[p] ?? p)
        .join('');
    },
  },
};

export const FUNCTION_NAMES: readonly string[] = Object.keys(FUNCTIONS);

const NO_SECRETS: TemplateSecrets = new Map();

function secretName(call: PlaceholderCall): string {
  const arg = call.args[0];
  return arg?.kind === 'secret' ? arg.name : '';
}

/** The problem with `call` (unknown function, arguments, place), or null when it may run. */
export function checkCall(call: PlaceholderCall, context: CallContext): string | null {
  const spec = Object.hasOwn(FUNCTIONS, call.name) ? FUNCTIONS[call.name] : undefined;
  if (!spec) return `unknown function ${call.name}`;
  return spec.check(call, context);
}

/**
 * `value` through `call`, which checkCall accepted; a result over MAX_VALUE_LENGTH, or a secret that `secrets`
 * lacks (the caller checks the names first), is a problem. The problem names the secret, never its value.
 */
export function applyCall(
  call: PlaceholderCall,
  value: string,
  secrets: TemplateSecrets = NO_SECRETS,
): string | { problem: string } {
  for (const arg of call.args) {
    if (arg.kind === 'secret' && !secrets.has(arg.name))
      return { problem: `SECRET.${arg.name} is not held by a method listed in x-vault-forward-authentications` };
  }
  const result = FUNCTIONS[call.name].apply(value, call, secrets);
  return result.length > MAX_VALUE_LENGTH
    ? { problem: `${call.name} would make the value longer than ${MAX_VALUE_LENGTH} characters` }
    : result;
}
