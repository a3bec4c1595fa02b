import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * @nestjs/swagger writes OpenAPI 3.0; the document is served as 3.1 (decision 0093) because 3.0's
 * `nullable` cannot say "this $ref or null": `nullable: true` beside `allOf: [$ref]` is ignored by
 * a JSON Schema validator, which then refuses the `null` the service sends. The rewrite is done once,
 * here, on the generated document, so no DTO has to know about it.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** 3.0's `nullable: true` as 3.1 says it: a null alternative to a $ref, or `null` among the types. */
function nullableTo31(schema: Json): void {
  if (schema.nullable === undefined) return;
  const nullable = schema.nullable === true;
  delete schema.nullable;
  if (!nullable) return;
  const allOf = schema.allOf as unknown[] | undefined;
  if (allOf?.length === 1 && isObject(allOf[0]) && typeof allOf[0].$ref === 'string') {
    // `type: object` beside the $ref would refuse the null alternative.
    delete schema.type;
    delete schema.allOf;
    schema.anyOf = [allOf[0], { type: 'null' }];
    return;
  }
  if (typeof schema.type === 'string') schema.type = [schema.type, 'null'];
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...(schema.enum as unknown[]), null];
}

/** Every schema object below `node` (iterative: the document is deep but has no cycles of objects). */
function walkSchemas(node: unknown, visit: (schema: Json) => void): void {
  const stack: unknown[] = [node];
  while (stack.length > 0) {
    const current = stack.pop();
    if (Array.isArray(current)) stack.push(...(current as unknown[]));
    else if (isObject(current)) {
      visit(current);
      stack.push(...Object.values(current));
    }
  }
}

const REF_PREFIX = '#/components/schemas/';

/**
 * The component schemas a request body reaches, through $refs at any depth: the validation pipe
 * refuses unknown fields in all of them (whitelist, forbidNonWhitelisted), so the document says
 * `additionalProperties: false` there. Response schemas stay open: clients must accept new fields.
 */
function requestBodySchemas(document: OpenAPIObject): Set<string> {
  const schemas = (document.components?.schemas ?? {}) as Record<string, unknown>;
  const reached = new Set<string>();
  const pending: unknown[] = [];
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Json)) {
      if (isObject(operation) && isObject(operation.requestBody)) pending.push(operation.requestBody);
    }
  }
  while (pending.length > 0) {
    walkSchemas(pending.pop(), (schema) => {
      const ref = schema.$ref;
      if (typeof ref !== 'string' || !ref.startsWith(REF_PREFIX)) return;
      const name = ref.slice(REF_PREFIX.length);
      if (reached.has(name)) return;
      reached.add(name);
      pending.push(schemas[name]);
    });
  }
  return reached;
}

/** Rewrites a 3.0 document from @nestjs/swagger into OpenAPI 3.1, in place. */
export function toOpenApi31(document: OpenAPIObject): OpenAPIObject {
  document.openapi = '3.1.0';
  walkSchemas(document.paths, nullableTo31);
  walkSchemas(document.components, nullableTo31);
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  for (const name of requestBodySchemas(document)) {
    const schema = schemas[name];
    // A schema made of allOf parts, or a map, says what it allows through those.
    if (
      schema &&
      isObject(schema.properties) &&
      schema.allOf === undefined &&
      schema.additionalProperties === undefined
    )
      schema.additionalProperties = false;
  }
  return document;
}
