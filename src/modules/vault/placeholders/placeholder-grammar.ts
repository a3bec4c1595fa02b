/**
 * The single-pass scanner of the placeholder grammar (docs/placeholders.md "Syntax"): where each
 * `{{ … }}` is, whether it is escaped, and the expression inside. Checking names, positions and
 * functions is placeholders.ts's; this file only reads the text.
 */
import type { PlaceholderArgument, PlaceholderCall } from './placeholder-functions';

/**
 * The escape before a placeholder: one backslash in raw text; in a JSON document a backslash can only
 * be written as `\\`, so there the escape is those two characters.
 */
export type EscapeStyle = 'raw' | 'json';
export const ESCAPE_LENGTH: Record<EscapeStyle, number> = { raw: 1, json: 2 };

/**
 * One placeholder as found in the text: `start` is where its escape backslashes begin (those after
 * the previous placeholder), `open` is its `{{`, `end` is just past its `}}`.
 */
export interface PlaceholderMatch {
  start: number;
  open: number;
  end: number;
  /** The first NAME_X of the expression (the only one of a plain placeholder). */
  token: string;
  escaped: boolean;
  /** The expression between the braces without the padding spaces: the key of its filled value. */
  key: string;
  /** Every NAME_X the expression reads, in order (`A or B`). */
  tokens: string[];
  /** The functions its value goes through, left to right. */
  calls: PlaceholderCall[];
  /**
   * An unescaped `{{ NAME_X |` (or `NAME_X or`) that does not go on as the grammar says: scanText
   * refuses it rather than send a half-written template on as text. Substitution leaves it as text.
   */
  malformed?: { at: number; message: string };
  /** A tag instead of a placeholder: `{% if NAME_X %}` (its tokens are the condition), `{% else %}`, `{% endif %}`. */
  kind?: 'if' | 'else' | 'endif';
}
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const SPACE = 0x20;
const BACKSLASH = 0x5c;
const UNDERSCORE = 0x5f;
const isUpper = (c: number) => c >= 0x41 && c <= 0x5a;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isTokenChar = (c: number) => isUpper(c) || isDigit(c) || c === UNDERSCORE;
const PIPE = 0x7c;
const OPEN_PAREN = 0x28;
const CLOSE_PAREN = 0x29;
const COMMA = 0x2c;
const QUOTE = 0x22;
const PERCENT = 0x25;
const SECRET_PREFIX = 'SECRET.';
const isLower = (c: number) => c >= 0x61 && c <= 0x7a;
const isFunctionChar = (c: number, first: boolean) => isLower(c) || (!first && (isDigit(c) || c === UNDERSCORE));
const isSecretChar = (c: number) => isLower(c) || isUpper(c) || isDigit(c) || c === UNDERSCORE || c === 0x2d;
/** Printable ASCII and Latin-1 letters, without the quote, the backslash and the braces. */
const isStringChar = (c: number) =>
  ((c >= 0x20 && c <= 0x7e) || c >= 0xa0) && c !== QUOTE && c !== BACKSLASH && c !== OPEN_BRACE && c !== CLOSE_BRACE;

/**
 * The grammar's regular expression, `(\\*)\{\{ *([A-Z][A-Z0-9_]*_[0-9]+) *\}\}` (plus the expression
 * forms `NAME_X or NAME_X` and `| function(arguments)`, and the tags `{% if NAME_X %}`, `{% else %}`,
 * `{% endif %}`), written as a single pass: as a regex it backtracks over every run of backslashes,
 * quadratic in the run's length (a 60 KB body of backslashes held the event loop for seconds). Each
 * character is looked at a bounded number of times: an attempt at a `{{` or `{%` reads only characters
 * that cannot start the next one (spaces, token and function characters, punctuation of the arguments,
 * string arguments, which may not hold a brace), and the backslashes before a placeholder are counted
 * back to the previous one.
 */
export function findPlaceholders(text: string, style: EscapeStyle): PlaceholderMatch[] {
  const matches: PlaceholderMatch[] = [];
  let previousEnd = 0;
  // The open `{% if %}` (one level), and whether its `{% else %}` was seen.
  let block: { match: PlaceholderMatch; elseSeen: boolean } | null = null;
  let open = nextOpen(text, 0);
  while (open >= 0) {
    const found =
      text.charCodeAt(open + 1) === PERCENT ? readTag(text, open, block !== null) : readPlaceholder(text, open);
    if ('resume' in found) {
      // Nothing read since the `{{` can open another pair, except its second brace with a `{` or `%` after it.
      const second = text.charCodeAt(open + 1) === OPEN_BRACE;
      const third = text.charCodeAt(open + 2);
      open = second && (third === OPEN_BRACE || third === PERCENT) ? open + 1 : nextOpen(text, found.resume);
      continue;
    }
    let start = open;
    while (start > previousEnd && text.charCodeAt(start - 1) === BACKSLASH) start--;
    const escaped = open - start >= ESCAPE_LENGTH[style];
    if ('failure' in found) {
      const { at, message } = found.failure;
      // An escaped malformed expression is text; nothing it read can open another pair.
      if (!escaped) matches.push({ ...found.match, start, open, end: at, escaped, malformed: { at, message } });
      open = nextOpen(text, at);
      continue;
    }
    previousEnd = found.close + 2;
    const match: PlaceholderMatch = { ...found.match, start, open, end: previousEnd, escaped };
    if (!escaped && match.kind) {
      if (match.kind === 'if' && block) match.malformed = { at: open, message: 'an if inside an if is not supported' };
      else if (match.kind === 'if') block = { match, elseSeen: false };
      else if (match.kind === 'else' && block!.elseSeen) match.malformed = { at: open, message: 'a second else' };
      else if (match.kind === 'else') block!.elseSeen = true;
      else block = null;
    }
    matches.push(match);
    open = nextOpen(text, previousEnd);
  }
  if (block) block.match.malformed = { at: text.length, message: 'no {% endif %} closes this if' };
  return matches;
}

/** The next `{{` or `{%` from `from`. */
function nextOpen(text: string, from: number): number {
  let i = text.indexOf('{', from);
  while (i >= 0 && text.charCodeAt(i + 1) !== OPEN_BRACE && text.charCodeAt(i + 1) !== PERCENT)
    i = text.indexOf('{', i + 1);
  return i;
}

type Found =
  | { resume: number }
  | { match: Omit<PlaceholderMatch, 'start' | 'open' | 'end' | 'escaped'>; close: number }
  | { match: Omit<PlaceholderMatch, 'start' | 'open' | 'end' | 'escaped'>; failure: { at: number; message: string } };

/** At a `{{`: a placeholder, a half-written expression, or text (`resume` is where to search on). */
function readPlaceholder(text: string, open: number): Found {
  let i = skipSpaces(text, open + 2);
  const tokenStart = i;
  while (isTokenChar(text.charCodeAt(i))) i++;
  const tokenEnd = i;
  i = skipSpaces(text, i);
  if (!isName(text, tokenStart, tokenEnd)) return { resume: i };
  const token = text.slice(tokenStart, tokenEnd);
  if (text.charCodeAt(i) === CLOSE_BRACE && text.charCodeAt(i + 1) === CLOSE_BRACE) {
    return { match: { token, key: token, tokens: [token], calls: [] }, close: i };
  }
  if (!startsExpression(text, i)) return { resume: i };
  const expression = parseExpression(text, i);
  if (expression.failure)
    return { match: { token, key: token, tokens: [token], calls: [] }, failure: expression.failure };
  const key = text.slice(tokenStart, trimEnd(text, expression.close));
  return {
    match: { token, key, tokens: [token, ...expression.tokens], calls: expression.calls },
    close: expression.close,
  };
}

/**
 * At a `{%`: `if NAME_X (or NAME_X)*`, or inside an if `else` and `endif`, up to `%}`. Anything else
 * (`{% if name %}` of another template language, an `endif` outside an if) is text.
 */
function readTag(text: string, open: number, inBlock: boolean): Found {
  const i = skipSpaces(text, open + 2);
  if (text.startsWith('if', i) && text.charCodeAt(i + 2) === SPACE) {
    const tokenStart = skipSpaces(text, i + 2);
    let j = tokenStart;
    while (isTokenChar(text.charCodeAt(j))) j++;
    if (!isName(text, tokenStart, j)) return { resume: j };
    const token = text.slice(tokenStart, j);
    const alternatives = parseAlternatives(text, skipSpaces(text, j));
    const match = { kind: 'if' as const, token, key: token, tokens: [token, ...alternatives.tokens], calls: [] };
    if (alternatives.failure) return { match, failure: alternatives.failure };
    if (!isTagEnd(text, alternatives.end)) {
      return { match, failure: { at: alternatives.end, message: 'expected "or" or the closing %}' } };
    }
    return { match: { ...match, key: text.slice(i, trimEnd(text, alternatives.end)) }, close: alternatives.end };
  }
  for (const kind of ['else', 'endif'] as const) {
    if (!inBlock || !text.startsWith(kind, i)) continue;
    const close = skipSpaces(text, i + kind.length);
    if (isTagEnd(text, close)) return { match: { kind, token: kind, key: kind, tokens: [], calls: [] }, close };
  }
  return { resume: i };
}

const isTagEnd = (text: string, i: number) => text.charCodeAt(i) === PERCENT && text.charCodeAt(i + 1) === CLOSE_BRACE;

function skipSpaces(text: string, i: number): number {
  while (text.charCodeAt(i) === SPACE) i++;
  return i;
}

function trimEnd(text: string, end: number): number {
  while (text.charCodeAt(end - 1) === SPACE) end--;
  return end;
}

/** After `{{ NAME_X `: a pipe, or `or` and a space, commit the text to being an expression. */
function startsExpression(text: string, i: number): boolean {
  return (
    text.charCodeAt(i) === PIPE ||
    (text.startsWith('or', i) && text.charCodeAt(i + 2) === SPACE && text.charCodeAt(i - 1) === SPACE)
  );
}

interface ParsedExpression {
  /** The NAME_X after the first. */
  tokens: string[];
  calls: PlaceholderCall[];
  /** Index of the closing `}}`. */
  close: number;
  failure?: { at: number; message: string };
}

/**
 * The rest of an expression from `i` (just after the first NAME_X and its spaces) to its `}}`:
 * `(or NAME_X)*` then `(| name((argument (, argument)*)?)?)*`. Reads no `{`, so a failed attempt
 * may resume the search where it stopped.
 */
function parseExpression(text: string, i: number): ParsedExpression {
  const result: ParsedExpression = { tokens: [], calls: [], close: -1 };
  const fail = (at: number, message: string) => ({ ...result, failure: { at, message } });
  const alternatives = parseAlternatives(text, i);
  result.tokens = alternatives.tokens;
  if (alternatives.failure) return { ...result, failure: alternatives.failure };
  i = alternatives.end;
  while (text.charCodeAt(i) === PIPE) {
    i = skipSpaces(text, i + 1);
    const at = i;
    while (isFunctionChar(text.charCodeAt(i), i === at)) i++;
    if (i === at) return fail(at, 'expected a function name after "|"');
    const call: PlaceholderCall = { name: text.slice(at, i), args: [], at };
    i = skipSpaces(text, i);
    if (text.charCodeAt(i) === OPEN_PAREN) {
      i = skipSpaces(text, i + 1);
      for (;;) {
        const argument = parseArgument(text, i);
        if ('failure' in argument) return fail(argument.at, argument.failure);
        call.args.push(argument.value);
        i = skipSpaces(text, argument.end);
        if (text.charCodeAt(i) === COMMA) {
          i = skipSpaces(text, i + 1);
          continue;
        }
        if (text.charCodeAt(i) !== CLOSE_PAREN) return fail(i, 'expected "," or ")" in the arguments');
        i = skipSpaces(text, i + 1);
        break;
      }
    }
    result.calls.push(call);
  }
  if (text.charCodeAt(i) !== CLOSE_BRACE || text.charCodeAt(i + 1) !== CLOSE_BRACE) {
    return fail(i, 'expected "|", "or" or the closing }}');
  }
  result.close = i;
  return result;
}

/** `(or NAME_X)*` from `i` (just after a NAME_X and its spaces): the names, and where they end (spaces skipped). */
function parseAlternatives(
  text: string,
  i: number,
): { tokens: string[]; end: number; failure?: { at: number; message: string } } {
  const tokens: string[] = [];
  while (text.startsWith('or', i) && text.charCodeAt(i + 2) === SPACE && text.charCodeAt(i - 1) === SPACE) {
    i = skipSpaces(text, i + 2);
    const start = i;
    while (isTokenChar(text.charCodeAt(i))) i++;
    if (!isName(text, start, i))
      return { tokens, end: i, failure: { at: start, message: 'expected NAME_X after "or"' } };
    tokens.push(text.slice(start, i));
    i = skipSpaces(text, i);
  }
  return { tokens, end: i };
}

/** `123`, `"text"` (no quote, backslash, brace or control character inside) or `SECRET.name`. */
function parseArgument(
  text: string,
  i: number,
): { value: PlaceholderArgument; end: number } | { failure: string; at: number } {
  const start = i;
  if (isDigit(text.charCodeAt(i))) {
    while (isDigit(text.charCodeAt(i))) i++;
    return { value: { kind: 'number', text: text.slice(start, i) }, end: i };
  }
  if (text.charCodeAt(i) === QUOTE) {
    i++;
    while (isStringChar(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== QUOTE) return { failure: 'unterminated or invalid string argument', at: i };
    return { value: { kind: 'string', value: text.slice(start + 1, i) }, end: i + 1 };
  }
  if (text.startsWith(SECRET_PREFIX, i)) {
    i += SECRET_PREFIX.length;
    while (isSecretChar(text.charCodeAt(i))) i++;
    if (i === start + SECRET_PREFIX.length) return { failure: 'expected a secret name after SECRET.', at: i };
    return { value: { kind: 'secret', name: text.slice(start + SECRET_PREFIX.length, i) }, end: i };
  }
  return { failure: 'expected an argument: a number, a "string" or SECRET.name', at: i };
}

/** NAME_X: starts with A–Z, ends in digits that follow an underscore, NAME not empty. */
function isName(text: string, start: number, end: number): boolean {
  if (end - start < 3 || !isUpper(text.charCodeAt(start))) return false;
  let digits = end;
  while (isDigit(text.charCodeAt(digits - 1))) digits--;
  return digits < end && digits - 1 > start && text.charCodeAt(digits - 1) === UNDERSCORE;
}
