import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * The second, strict check of every answer (decision 0093): Ajv's JSON Schema 2020-12 dialect, which
 * OpenAPI 3.1 schemas are, in strict mode, on the document's schemas as written: no translation of
 * `nullable`, no closing of objects, so a schema the first check (contract.ts) only accepts after its
 * own rewriting fails here. Strict mode also refuses schemas with unknown keywords, formats or
 * contradictory types; OpenAPI's own annotations are declared as keywords, nothing else is.
 */

type Json = Record<string, any>;

const REF_PREFIX = '#/components/schemas/';
/** Annotation keywords OpenAPI 3.1 adds to JSON Schema; they never change what validates. */
const OPENAPI_KEYWORDS = ['discriminator', 'xml', 'externalDocs', 'example'];

/** `#/components/schemas/X` as the id the schema is added to Ajv under. */
function refsToIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(refsToIds);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node as Json).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith(REF_PREFIX)
        ? `${value.slice(REF_PREFIX.length)}.json`
        : refsToIds(value),
    ]),
  );
}

/** Every x- extension the document puts inside a schema (Ajv strict must be told of each). */
function extensionKeys(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const n of node) extensionKeys(n, into);
  else if (node && typeof node === 'object')
    for (const [key, value] of Object.entries(node as Json)) {
      if (key.startsWith('x-')) into.add(key);
      extensionKeys(value, into);
    }
  return into;
}

export class StrictContract {
  private readonly ajv = new Ajv2020({ strict: true, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(document: Json) {
    if (!/^3\.1\./.test(String(document.openapi)))
      throw new Error(`strict contract: the document is OpenAPI ${document.openapi}, not 3.1`);
    addFormats(this.ajv);
    const schemas: Json = document.components?.schemas ?? {};
    for (const keyword of [...OPENAPI_KEYWORDS, ...extensionKeys(schemas)]) this.ajv.addKeyword(keyword);
    for (const [name, schema] of Object.entries(schemas))
      this.ajv.addSchema({ ...(refsToIds(schema) as Json), $id: `${name}.json` });
  }

  /** The schema's complaints about `body`, empty when it validates. */
  errors(key: string, schema: Json, body: unknown): string[] {
    let validate = this.validators.get(key);
    if (!validate) {
      if (schema.$ref !== undefined && Object.keys(schema).length === 1)
        validate = this.ajv.getSchema(refsToIds(schema.$ref) as string);
      validate ??= this.ajv.compile(refsToIds(schema) as Json);
      if (!validate) throw new Error(`strict contract: no schema ${String(schema.$ref)}`);
      this.validators.set(key, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
    );
  }
}
