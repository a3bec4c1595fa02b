import { findNodeAtOffset, Node, parseTree, ParseError, printParseErrorCode } from 'jsonc-parser';
import { SaxesParser } from 'saxes';
import { BodyFormat, formNameSegments } from './body-paths';

/**
 * The values of a body as text positions (decision 0155): what a replacement takes the place of, in the very text
 * the card-data detector read, so a card number's id goes into the same spelling slot and every other byte stays as
 * the caller wrote it. Read by well-kept parsers: jsonc-parser (strict options: no comments, no trailing commas)
 * for JSON, saxes for XML; a form is the WHATWG urlencoded format, split on `&` and `=`, its names and values
 * percent-decoded as UTF-8.
 */
export interface Leaf {
  /** Names from the root, as a mapping's segments are written (body-paths.ts). */
  path: string[];
  /** The nodes from the root to the leaf's parent: how much two leaves share tells how near they are. */
  nodes: string[];
  /** [start, end) of the value's spelling in the text. */
  start: number;
  end: number;
  /** The value, decoded (escapes, entities, percent-encoding undone). */
  value: string;
  /** A JSON value that is not a string: what takes its place must be written as one. */
  bare: boolean;
}

export interface ReadBody {
  format: BodyFormat | 'text';
  leaves: Leaf[];
  /** Whether text put in place of [start, end) must be written as a JSON string (it stands outside one). */
  bareAt(start: number, end: number): boolean;
  /** Whether `text` (the body once rewritten) still reads as this format. */
  reads(text: string): boolean;
}

/** The body does not read as the format its content type says; `why` names where, never a value. */
export class BodyUnparseable extends Error {
  constructor(readonly why: string) {
    super(why);
    this.name = 'BodyUnparseable';
  }
}

export function readBody(format: BodyFormat | 'text', text: string): ReadBody {
  if (format === 'json') return readJson(text);
  if (format === 'xml') return readXml(text);
  if (format === 'form') return readForm(text);
  return { format, leaves: [], bareAt: () => false, reads: () => true };
}

function jsonTree(text: string): Node {
  const errors: ParseError[] = [];
  let root: Node | undefined;
  try {
    root = parseTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    // jsonc-parser reads what JSON.parse does not always refuse alike (lone surrogates are fine in both): the
    // strict parser has the last word.
    JSON.parse(text);
  } catch (error) {
    if (error instanceof RangeError) throw new BodyUnparseable('JSON nested too deeply');
    if (errors.length === 0) throw new BodyUnparseable('not JSON');
  }
  if (errors.length > 0 || root === undefined)
    throw new BodyUnparseable(
      errors.length > 0 ? `JSON: ${printParseErrorCode(errors[0].error)} at character ${errors[0].offset}` : 'not JSON',
    );
  return root;
}

function readJson(text: string): ReadBody {
  const root = jsonTree(text);
  const leaves: Leaf[] = [];
  // Depth first, in document order, without recursion (a deep document must not exhaust the stack).
  const stack: Array<{ node: Node; path: string[] }> = [{ node: root, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (node.type === 'object' || node.type === 'array') {
      const children = (node.children ?? []).map((child, i) => {
        if (node.type === 'array') return { node: child, path: [...path, String(i)] };
        const [key, value] = child.children ?? [];
        return { node: value, path: [...path, String(key?.value)] };
      });
      for (let i = children.length - 1; i >= 0; i--) if (children[i].node) stack.push(children[i]);
    } else if (node.type === 'string') {
      leaves.push({
        path,
        nodes: path.slice(0, -1),
        start: node.offset + 1,
        end: node.offset + node.length - 1,
        value: String(node.value),
        bare: false,
      });
    } else if (node.type === 'number') {
      const spelt = text.slice(node.offset, node.offset + node.length);
      leaves.push({
        path,
        nodes: path.slice(0, -1),
        start: node.offset,
        end: node.offset + node.length,
        value: spelt,
        bare: true,
      });
    }
  }
  return {
    format: 'json',
    leaves,
    bareAt: (start, end) => {
      const node = findNodeAtOffset(root, start, false);
      return !(node?.type === 'string' && start > node.offset && end < node.offset + node.length);
    },
    reads: (changed) => {
      try {
        JSON.parse(changed);
        return true;
      } catch {
        return false;
      }
    },
  };
}

/**
 * saxes reports where it is after each event (an index into the string): a text ends where the `<` after it is
 * read, a CDATA section's content three characters before its end. Entities are not expanded beyond XML's own
 * (no DTD is read), so no value comes from outside the text.
 */
function xmlLeaves(text: string): Leaf[] {
  const parser = new SaxesParser({ position: true });
  const leaves: Leaf[] = [];
  const open: Array<{ name: string; id: string }> = [];
  let serial = 0;
  let last = 0;
  const leaf = (start: number, end: number, value: string) => {
    if (open.length === 0 || value.trim() === '') return;
    leaves.push({ path: open.map((e) => e.name), nodes: open.map((e) => e.id), start, end, value, bare: false });
  };
  const moved = () => {
    last = parser.position;
  };
  parser.on('error', (error) => {
    throw new BodyUnparseable(`XML: ${error.message.split('\n')[0].slice(0, 200)}`);
  });
  parser.on('xmldecl', moved);
  parser.on('doctype', moved);
  parser.on('comment', moved);
  parser.on('processinginstruction', moved);
  parser.on('opentag', (tag) => {
    open.push({ name: tag.name, id: String(serial++) });
    moved();
  });
  parser.on('closetag', () => {
    open.pop();
    moved();
  });
  parser.on('text', (value) => {
    const end = parser.position - 1;
    leaf(last, end, value);
    last = end;
  });
  parser.on('cdata', (value) => {
    leaf(last + '<![CDATA['.length, parser.position - ']]>'.length, value);
    moved();
  });
  parser.write(text).close();
  return leaves;
}

function readXml(text: string): ReadBody {
  const leaves = xmlLeaves(text);
  return {
    format: 'xml',
    leaves,
    bareAt: () => false,
    reads: (changed) => {
      try {
        xmlLeaves(changed);
        return true;
      } catch {
        return false;
      }
    },
  };
}

function formDecoded(raw: string, field: number): string {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    throw new BodyUnparseable(`form: field ${field} is not percent-encoded UTF-8`);
  }
}

function readForm(text: string): ReadBody {
  const leaves: Leaf[] = [];
  let offset = 0;
  text.split('&').forEach((piece, i) => {
    const equals = piece.indexOf('=');
    if (piece.length > 0 && equals !== 0) {
      const name = formDecoded(equals < 0 ? piece : piece.slice(0, equals), i + 1);
      const value = equals < 0 ? '' : formDecoded(piece.slice(equals + 1), i + 1);
      const path = formNameSegments(name);
      const start = equals < 0 ? offset + piece.length : offset + equals + 1;
      leaves.push({ path, nodes: path.slice(0, -1), start, end: offset + piece.length, value, bare: false });
    }
    offset += piece.length + 1;
  });
  return { format: 'form', leaves, bareAt: () => false, reads: () => true };
}
