/**
 * Multipart parts, CSV columns, form fields and `name: value` lines: the line-shaped scanners of
 * withoutAuthenticationData (authentication-data.ts). Linear, and never throwing.
 */
import { type Edit, isAuthenticationDataField, REDACTED_VALUE } from './authentication-data-names';

/** Each line's start and end (without its line break). */
function* lines(text: string, from = 0): Generator<{ start: number; end: number }> {
  let start = from;
  while (start <= text.length) {
    const newline = text.indexOf('\n', start);
    const next = newline < 0 ? text.length : newline;
    const end = next > start && text[next - 1] === '\r' ? next - 1 : next;
    yield { start, end };
    if (newline < 0) return;
    start = newline + 1;
  }
}

const DISPOSITION_NAME = /^content-disposition\s*:.*?(?:^|;)\s*name(\*?)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i;

/** A multipart part whose `Content-Disposition` names a code: its body, up to the next delimiter line. */
export function multipartEdits(text: string): Edit[] {
  const edits: Edit[] = [];
  let delimiter: string | null = null;
  let from = 0;
  scan: while (from <= text.length) {
    for (const { start, end } of lines(text, from)) {
      const line = text.slice(start, end);
      if (line.startsWith('--')) delimiter = line.replace(/--\s*$/, '').trimEnd();
      const m = DISPOSITION_NAME.exec(line);
      if (!m) continue;
      const raw = m[2] ?? m[3];
      const name = m[1] ? raw.replace(/^[\w-]*'[\w-]*'/, '') : raw;
      if (!isAuthenticationDataField(name)) continue;
      // The part's headers end at the first empty line; its body at the next delimiter line.
      const blank = /\r?\n\r?\n/g;
      blank.lastIndex = end;
      const headersEnd = blank.exec(text);
      if (!headersEnd) {
        edits.push({ start: end, end: text.length, text: '' });
        break scan;
      }
      const bodyStart = headersEnd.index + headersEnd[0].length;
      const next = delimiter === null ? -1 : text.indexOf(`\n${delimiter}`, bodyStart - 1);
      const bodyEnd = next < 0 ? text.length : next > 0 && text[next - 1] === '\r' ? next - 1 : next;
      if (bodyEnd > bodyStart) edits.push({ start: bodyStart, end: bodyEnd, text: REDACTED_VALUE });
      if (next < 0) break scan;
      from = next + 1;
      continue scan;
    }
    break;
  }
  return edits;
}

const CSV_DELIMITERS = [',', ';', '\t', '|'];

/** The cells of one CSV record from `start`: each cell's span and whether it was quoted; where the record ends. */
function csvRecord(
  text: string,
  start: number,
  delimiter: string,
): { cells: Array<{ start: number; end: number; quoted: boolean }>; next: number } {
  const cells: Array<{ start: number; end: number; quoted: boolean }> = [];
  let at = start;
  for (;;) {
    const cellStart = at;
    if (text[at] === '"') {
      at++;
      for (;;) {
        const q = text.indexOf('"', at);
        if (q < 0) {
          cells.push({ start: cellStart, end: text.length, quoted: true });
          return { cells, next: text.length + 1 };
        }
        if (text[q + 1] === '"') at = q + 2;
        else {
          at = q + 1;
          break;
        }
      }
      // Anything after the closing quote up to the delimiter belongs to the cell.
      while (at < text.length && text[at] !== delimiter && text[at] !== '\n' && text[at] !== '\r') at++;
      cells.push({ start: cellStart, end: at, quoted: true });
    } else {
      while (at < text.length && text[at] !== delimiter && text[at] !== '\n' && text[at] !== '\r') at++;
      cells.push({ start: cellStart, end: at, quoted: false });
    }
    if (at >= text.length) return { cells, next: text.length + 1 };
    if (text[at] === delimiter) {
      at++;
      continue;
    }
    if (text[at] === '\r' && text[at + 1] === '\n') at++;
    return { cells, next: at + 1 };
  }
}

/**
 * CSV: when the body's first line is a header row (names only, split by `,`, `;`, tab or `|`, quoted or
 * not) naming a code's column, that column's cell in every later row.
 */
export function csvEdits(text: string): Edit[] {
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const newline = text.indexOf('\n', start);
  const first = text.slice(start, newline < 0 ? text.length : newline);
  if (newline < 0 || /[{}<>=:]/.test(first)) return [];
  const delimiter = CSV_DELIMITERS.map((d) => [d, first.split(d).length - 1] as const).reduce((a, b) =>
    b[1] > a[1] ? b : a,
  );
  if (delimiter[1] === 0) return [];
  const header = csvRecord(text, start, delimiter[0]);
  const columns = new Set<number>();
  for (const [index, cell] of header.cells.entries()) {
    const raw = text.slice(cell.start, cell.end).trim();
    const name = cell.quoted ? raw.replace(/^"|"$/g, '').replaceAll('""', '"') : raw;
    if (!cell.quoted && name.includes('"')) return []; // not a header row: a quote inside a bare name
    if (isAuthenticationDataField(name)) columns.add(index);
  }
  if (columns.size === 0) return [];
  const edits: Edit[] = [];
  for (let at = header.next; at < text.length;) {
    const row = csvRecord(text, at, delimiter[0]);
    for (const [index, cell] of row.cells.entries())
      if (columns.has(index) && cell.end > cell.start)
        edits.push({
          start: cell.start,
          end: cell.end,
          text: cell.quoted ? `"${REDACTED_VALUE}"` : REDACTED_VALUE,
        });
    at = row.next;
  }
  return edits;
}

/** A form field's or a logfmt pair's name ends at one of these (walking back from its `=`). */
const FORM_BOUNDARY = /[\s&;?"'<>=,{}()/\\|]/;
/** Where an unquoted form value ends. */
const FORM_VALUE_END = /[&;\r\n"'<>\\]/g;

/** `name=value` pairs (forms, query strings, cookies, logfmt, inside any text) whose name is a code's. */
export function formEdits(text: string): Edit[] {
  const edits: Edit[] = [];
  let done = 0;
  for (let equals = text.indexOf('='); equals >= 0; equals = text.indexOf('=', equals + 1)) {
    if (equals < done) continue;
    let start = equals;
    while (start > 0 && !FORM_BOUNDARY.test(text[start - 1])) start--;
    if (start === equals || !isAuthenticationDataField(text.slice(start, equals))) continue;
    const valueStart = equals + 1;
    const q = text[valueStart];
    if (q === '"' || q === "'") {
      const close = text.indexOf(q, valueStart + 1);
      const end = close < 0 ? text.length : close;
      if (end > valueStart + 1) edits.push({ start: valueStart + 1, end, text: REDACTED_VALUE });
      done = end;
      continue;
    }
    FORM_VALUE_END.lastIndex = valueStart;
    const end = FORM_VALUE_END.exec(text)?.index ?? text.length;
    if (end > valueStart) edits.push({ start: valueStart, end, text: REDACTED_VALUE });
    done = end;
  }
  return edits;
}

/**
 * Lines `name: value` or `name = value` whose name is a code's (headers written in a text body, YAML,
 * properties): the rest of the line. A quoted name (a JSON member) is JSON's; `name=value` is a form's.
 */
export function lineEdits(text: string): Edit[] {
  const edits: Edit[] = [];
  for (const { start, end } of lines(text)) {
    let nameStart = start;
    while (nameStart < end && (text[nameStart] === ' ' || text[nameStart] === '\t')) nameStart++;
    let separator = nameStart;
    while (separator < end && !LINE_NAME_END.test(text[separator])) separator++;
    if (separator === end || separator === nameStart || (text[separator] !== ':' && text[separator] !== '=')) continue;
    let nameEnd = separator;
    while (nameEnd > nameStart && (text[nameEnd - 1] === ' ' || text[nameEnd - 1] === '\t')) nameEnd--;
    // `name=value` with nothing between is a form field's (formEdits).
    if (text[separator] === '=' && nameEnd === separator) continue;
    if (nameEnd === nameStart || !isAuthenticationDataField(text.slice(nameStart, nameEnd))) continue;
    let valueStart = separator + 1;
    while (valueStart < end && (text[valueStart] === ' ' || text[valueStart] === '\t')) valueStart++;
    let valueEnd = end;
    while (valueEnd > valueStart && (text[valueEnd - 1] === ' ' || text[valueEnd - 1] === '\t')) valueEnd--;
    if (valueEnd === valueStart || text.slice(valueStart, valueEnd) === REDACTED_VALUE) continue;
    edits.push({ start: valueStart, end: valueEnd, text: REDACTED_VALUE });
  }
  return edits;
}

/** What ends a line's name: its separator, or a character no such name holds (a JSON member's quote, a tag). */
const LINE_NAME_END = /[:="'{}<>,]/;
