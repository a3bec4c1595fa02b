/**
 * JSON (also escaped inside JSON strings) and XML: the scanners of withoutAuthenticationData
 * (authentication-data.ts) for the shapes with brackets and tags. Each reads each character a bounded
 * number of times and never throws; what does not close runs to the end of its region.
 */
import { type Edit, isAuthenticationDataField, REDACTED_VALUE } from './authentication-data-names';

/** Backslashes immediately before `at`. */
function backslashesBefore(text: string, at: number): number {
  let b = 0;
  while (at - b - 1 >= 0 && text.charCodeAt(at - b - 1) === 92) b++;
  return b;
}

/**
 * The escaping depth of the quote at `at`: 0 for `"`, 1 for `\"` (a quote of JSON inside a JSON string),
 * 2 for `\\\"`; the trailing one bits of its backslashes (`\\"` is an escaped backslash, then a depth-0 quote).
 */
function quoteDepth(text: string, at: number): number {
  let b = backslashesBefore(text, at);
  let depth = 0;
  while (b & 1) {
    depth++;
    b >>= 1;
  }
  return depth;
}

/** The next quote at or after `from` of depth at most `depth` (deeper quotes are text inside a string), or -1. */
function nextQuote(text: string, from: number, depth: number): number {
  for (let at = text.indexOf('"', from); at >= 0; at = text.indexOf('"', at + 1))
    if (quoteDepth(text, at) <= depth) return at;
  return -1;
}

/** One level of JSON string escapes undone; what is not an escape kept. */
function jsonUnescaped(text: string): string {
  if (!text.includes('\\')) return text;
  return text.replace(/\\(u[0-9a-fA-F]{4}|["\\/bfnrt])/g, (_, e: string) =>
    e.length === 5
      ? String.fromCharCode(parseInt(e.slice(1), 16))
      : (({ b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' } as Record<string, string>)[e] ?? e),
  );
}

/** Whitespace between tokens at `depth`: blanks, and below depth 0 the escapes `\n`, `\r`, `\t`. */
function skipJsonSpace(text: string, from: number, depth: number): number {
  let at = from;
  for (;;) {
    const c = text.charCodeAt(at);
    if (c === 32 || c === 9 || c === 10 || c === 13) at++;
    else if (depth > 0 && c === 92) {
      let run = at;
      while (text.charCodeAt(run) === 92) run++;
      if (!'nrt'.includes(text[run] ?? '"')) return at;
      at = run + 1;
    } else return at;
  }
}

/**
 * The members of JSON escaped `depth` times whose name is a code's: each value, whatever its kind, becomes
 * the string "[Redacted]" quoted at that depth. A string or a bracket that does not close within its
 * region (the enclosing string, or the text) runs to the end of the region.
 */
export function jsonEdits(text: string, depth: number): Edit[] {
  const edits: Edit[] = [];
  const escapes = 2 ** depth - 1;
  const quote = `${'\\'.repeat(escapes)}"`;
  const replacement = `${quote}${REDACTED_VALUE}${quote}`;
  let at = 0;
  while (at < text.length) {
    const open = nextQuote(text, at, depth);
    if (open < 0) break;
    if (quoteDepth(text, open) < depth) {
      at = open + 1; // an enclosing string's quote: not a string of this depth
      continue;
    }
    const close = nextQuote(text, open + 1, depth);
    if (close < 0) break;
    if (quoteDepth(text, close) < depth) {
      at = close + 1;
      continue;
    }
    const colon = skipJsonSpace(text, close + 1, depth);
    if (text[colon] !== ':') {
      at = close + 1;
      continue;
    }
    const name = text.slice(open + 1, close - escapes);
    let decoded = name;
    for (let i = 0; i <= depth; i++) decoded = jsonUnescaped(decoded);
    if (!isAuthenticationDataField(decoded)) {
      at = colon + 1;
      continue;
    }
    const valueStart = skipJsonSpace(text, colon + 1, depth);
    const valueEnd = jsonValueEnd(text, valueStart, depth);
    if (valueEnd > valueStart) edits.push({ start: valueStart, end: valueEnd, text: replacement });
    at = Math.max(valueEnd, colon + 1);
  }
  return edits;
}

/** Where the JSON value at `start` (escaped `depth` times) ends: after its closing quote or bracket. */
function jsonValueEnd(text: string, start: number, depth: number): number {
  let run = start;
  while (text.charCodeAt(run) === 92) run++;
  if (text[run] === '"' && quoteDepth(text, run) === depth && run - start === 2 ** depth - 1) {
    const close = nextQuote(text, run + 1, depth);
    if (close < 0) return text.length;
    if (quoteDepth(text, close) < depth) return close - backslashesBefore(text, close);
    return close + 1;
  }
  const c = text[start];
  if (c === '{' || c === '[') {
    let nesting = 0;
    const STRUCTURE = /[{}[\]"]/g;
    STRUCTURE.lastIndex = start;
    for (let m = STRUCTURE.exec(text); m; m = STRUCTURE.exec(text)) {
      const at = m.index;
      if (m[0] === '"') {
        const d = quoteDepth(text, at);
        if (d < depth) return at - backslashesBefore(text, at); // the enclosing string ends: so does the value
        if (d > depth) continue;
        const close = nextQuote(text, at + 1, depth);
        if (close < 0) return text.length;
        if (quoteDepth(text, close) < depth) return close - backslashesBefore(text, close);
        STRUCTURE.lastIndex = close + 1;
      } else if (m[0] === '{' || m[0] === '[') nesting++;
      else if (--nesting === 0) return at + 1;
    }
    return text.length;
  }
  // A number, a literal, or anything else up to the next delimiter.
  const END = /[,}\]\s"<\\]/g;
  END.lastIndex = start;
  return END.exec(text)?.index ?? text.length;
}

// ---------------------------------------------------------------------------------------------------------------
// XML

const XML_NAME = /[^\s/>"'=<!?][^\s/>"'=<]*/y;
/**
 * The attributes in text[from, to) (inside one tag) whose name is a code's: `name="v"`, `name='v'`,
 * `name=\\"v\\"` (XML inside a JSON string) or `name=v`, each value replaced inside its quotes.
 */
function attributeEdits(text: string, from: number, to: number): Edit[] {
  const edits: Edit[] = [];
  let done = from;
  for (let equals = text.indexOf('=', from); equals >= 0 && equals < to; equals = text.indexOf('=', equals + 1)) {
    if (equals < done) continue;
    let nameEnd = equals;
    while (nameEnd > done && /\s/.test(text[nameEnd - 1])) nameEnd--;
    let nameStart = nameEnd;
    while (nameStart > done && !/[\s=/"'<>]/.test(text[nameStart - 1])) nameStart--;
    let valueStart = equals + 1;
    while (valueStart < to && /\s/.test(text[valueStart])) valueStart++;
    const quote = text.startsWith('\\"', valueStart)
      ? '\\"'
      : /["']/.test(text[valueStart] ?? '')
        ? text[valueStart]
        : '';
    const close = quote === '' ? -1 : text.indexOf(quote, valueStart + quote.length);
    const valueEnd =
      quote === '' ? nextMatch(text, /[\s>"'<]/g, valueStart, to) : close < 0 || close > to ? to : close + quote.length;
    done = Math.max(valueEnd, equals + 1);
    if (nameStart === nameEnd || !isAuthenticationDataField(text.slice(nameStart, nameEnd))) continue;
    if (valueEnd - valueStart > 2 * quote.length)
      edits.push({ start: valueStart, end: valueEnd, text: `${quote}${REDACTED_VALUE}${quote}` });
  }
  return edits;
}

/** The first match of global `pattern` in text[from, to), or `to`. */
function nextMatch(text: string, pattern: RegExp, from: number, to: number): number {
  pattern.lastIndex = from;
  const m = pattern.exec(text);
  return m && m.index < to ? m.index : to;
}

/** Where the tag whose name ends at `from` ends (its `>`), or -1 when a `<` or the end comes first. */
function tagEnd(text: string, from: number): number {
  let at = from;
  while (at < text.length) {
    const c = text[at];
    if (c === '>') return at;
    if (c === '<') return -1;
    if (c === '"' || c === "'") {
      let close = at + 1;
      while (close < text.length && text[close] !== c && text[close] !== '<') close++;
      if (text[close] !== c) return -1;
      at = close + 1;
    } else at++;
  }
  return -1;
}

/**
 * The start of the close tag of element `name` whose content starts at `from`, and the end of that tag;
 * same-named elements nested inside are counted, and comments, CDATA sections and processing instructions
 * skipped whole, so a `</cvv>` inside one does not end the element. null when it never closes.
 */
function matchingClose(text: string, name: string, from: number): { start: number; end: number } | null {
  let nesting = 1;
  let at = from;
  for (;;) {
    at = text.indexOf('<', at);
    if (at < 0) return null;
    const skip = (
      [
        ['<!--', '-->'],
        ['<![CDATA[', ']]>'],
        ['<?', '?>'],
      ] as const
    ).find(([open]) => text.startsWith(open, at));
    if (skip) {
      const end = text.indexOf(skip[1], at + skip[0].length);
      if (end < 0) return null;
      at = end + skip[1].length;
      continue;
    }
    const closing = text[at + 1] === '/';
    const nameAt = at + (closing ? 2 : 1);
    const after = text[nameAt + name.length];
    if (!text.startsWith(name, nameAt) || (after !== undefined && !/[\s/>]/.test(after))) {
      at++;
      continue;
    }
    const end = tagEnd(text, nameAt + name.length);
    if (end < 0) {
      at = nameAt;
      continue;
    }
    if (closing) {
      if (--nesting === 0) return { start: at, end: end + 1 };
    } else if (text[end - 1] !== '/') nesting++;
    at = end + 1;
  }
}

/** Elements and attributes whose name is a code's: an element's whole content, an attribute's value. */
export function xmlEdits(text: string): Edit[] {
  const edits: Edit[] = [];
  let at = text.indexOf('<');
  while (at >= 0 && at < text.length) {
    XML_NAME.lastIndex = at + 1;
    const m = XML_NAME.exec(text);
    if (!m) {
      at = text.indexOf('<', at + 1);
      continue;
    }
    const nameEnd = at + 1 + m[0].length;
    const end = tagEnd(text, nameEnd);
    const attributesEnd = end >= 0 ? end : nextOr(text, '<', nameEnd);
    edits.push(...attributeEdits(text, nameEnd, attributesEnd));
    if (end < 0) {
      at = text.indexOf('<', nameEnd);
      continue;
    }
    if (text[end - 1] !== '/' && isAuthenticationDataField(m[0])) {
      const close = matchingClose(text, m[0], end + 1);
      const contentEnd = close ? close.start : text.length;
      if (contentEnd > end + 1) edits.push({ start: end + 1, end: contentEnd, text: REDACTED_VALUE });
      if (!close) break;
      at = text.indexOf('<', close.end);
      continue;
    }
    at = text.indexOf('<', end + 1);
  }
  return edits;
}

function nextOr(text: string, what: string, from: number): number {
  const at = text.indexOf(what, from);
  return at < 0 ? text.length : at;
}
