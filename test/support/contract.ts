import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { StrictContract } from './strict-contract';

/**
 * The OpenAPI document held against real answers. `http()` (test/support/http.ts) passes every
 * response of the service through `check`: a status the operation does not declare, a content type
 * it does not declare, or a body its schema refuses fails the test that made the request. The
 * document is the one the app under test serves (so test-only routes, such as the probe, count),
 * fetched once per app and test file; each schema is compiled once, on first use.
 */

/** Not API operations: the document itself, its browsable page and the dashboard's bundle. */
const NOT_OPERATIONS = [/^\/docs(\/|$)/, /^\/openapi\.(json|yaml)$/, /^\/dashboard(\/|$)/];

const PROBLEM_REF = '#/components/schemas/Problem';
const GR4VY_ERROR_REF = '#/components/schemas/Gr4vyError';
const DOCUMENT_ID = 'openapi.json';
/** The document's list, by status, of what the HTTP layer answers before any route (src/app/openapi-document.ts). */
const HTTP_LAYER_RESPONSES = 'x-http-layer-responses';

export class ContractViolation extends Error {
  constructor(message: string) {
    super(`OpenAPI contract: ${message}`);
    this.name = 'ContractViolation';
  }
}

type Json = Record<string, any>;

export interface ContractResponse {
  method: string;
  /** The request target: path and query. */
  target: string;
  status: number;
  headers: Headers;
  text: string;
}

/** How many answers were held against the document, per test file (a check that never runs proves nothing). */
export const contractStats = { checked: 0 };

/**
 * OpenAPI 3.0 schema objects as JSON Schema for Ajv: `nullable` becomes a null alternative, refs
 * point into the document added to Ajv, and objects that list their properties allow no others
 * (the document leaves them open for forward compatibility; the service must not send more).
 */
function toJsonSchema(node: unknown, inAllOf = false): unknown {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(n));
  if (!node || typeof node !== 'object') return node;
  const source = node as Json;
  if (typeof source.$ref === 'string') return { $ref: `${DOCUMENT_ID}${source.$ref}` };
  const out: Json = {};
  for (const [key, value] of Object.entries(source)) {
    if (
      [
        'nullable',
        'example',
        'examples',
        'discriminator',
        'xml',
        'externalDocs',
        'deprecated',
        'readOnly',
        'writeOnly',
      ].includes(key)
    )
      continue;
    if (key.startsWith('x-')) continue;
    if (key === 'format' && value === 'binary') continue;
    if (key === 'properties')
      out.properties = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, toJsonSchema(v)]));
    else if (key === 'allOf') out.allOf = (value as unknown[]).map((v) => toJsonSchema(v, true));
    else if (['items', 'additionalProperties', 'not'].includes(key) || ['oneOf', 'anyOf'].includes(key))
      out[key] = toJsonSchema(value);
    else out[key] = value;
  }
  if (out.properties && out.additionalProperties === undefined && !inAllOf) out.additionalProperties = false;
  return source.nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

interface PathEntry {
  template: string;
  pattern: RegExp;
  literals: number;
  item: Json;
}

export class Contract {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly paths: PathEntry[];
  /** The second check of each body, by another validator in strict mode (strict-contract.ts). */
  private readonly strict: StrictContract;

  constructor(private readonly document: Json) {
    this.strict = new StrictContract(document);
    addFormats(this.ajv);
    const schemas = Object.entries<unknown>(document.components?.schemas ?? {}).map(([name, schema]) => [
      name,
      toJsonSchema(schema),
    ]);
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: Object.fromEntries(schemas) } });
    this.paths = Object.entries<Json>(document.paths).map(([template, item]) => {
      const segments = template.split('/');
      const pattern = new RegExp(
        `^${segments.map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`,
      );
      return { template, pattern, literals: segments.filter((s) => !s.startsWith('{')).length, item };
    });
  }

  /**
   * `check` for a fetch Response that the caller still reads: the body is read from a clone, and only
   * when the check looks at it, so a forward relaying a downstream's answer (never held against the
   * document, and perhaps a stream that is still coming or that the test cuts) is not waited for.
   */
  async checkResponse(method: string, target: string, response: Response): Promise<void> {
    const path = target.split('?')[0];
    const relayed =
      method.toUpperCase() === 'POST' &&
      path === '/vault-forward' &&
      response.headers.get('x-vault-forward-error') !== 'true' &&
      response.headers.get('preference-applied') !== 'respond-async';
    const text = relayed || method.toUpperCase() === 'HEAD' ? '' : await response.clone().text();
    this.check({ method, target, status: response.status, headers: response.headers, text });
  }

  /** Throws a ContractViolation unless the answer is one the document declares, body included. */
  check(response: ContractResponse): void {
    const path = response.target.split('?')[0];
    if (NOT_OPERATIONS.some((p) => p.test(path))) return;
    contractStats.checked++;
    const entry = this.paths.filter((p) => p.pattern.test(path)).sort((a, b) => b.literals - a.literals)[0];
    const method = response.method.toLowerCase() === 'head' ? 'get' : response.method.toLowerCase();
    const operation = entry?.item[method] as Json | undefined;
    const where = `${response.method.toUpperCase()} ${entry?.template ?? path}`;
    if (!operation) {
      // No such operation: the answer can only be the service refusing it.
      if (response.status < 400)
        throw new ContractViolation(`${where} is no operation of the document, yet answered ${response.status}`);
      // A HEAD answer has no body to hold against anything.
      if (response.method.toUpperCase() === 'HEAD') return;
      this.validateBody(
        where,
        response,
        {
          'application/problem+json': { schema: { $ref: PROBLEM_REF } },
          'application/json': { schema: { $ref: GR4VY_ERROR_REF } },
        },
        `problem:${response.status}`,
      );
      return;
    }
    const status = String(response.status);
    if (
      entry.template === '/vault-forward' &&
      method === 'post' &&
      response.headers.get('x-vault-forward-error') !== 'true'
    ) {
      // The downstream's answer is relayed as it is (the `default` response); only a queued job is ours.
      if (response.headers.get('preference-applied') !== 'respond-async') return;
      // 202 queued, or 200: an Idempotency-Key replay with the same job; each is its own response in the document.
      if (status !== '200' && status !== '202')
        throw new ContractViolation(`${where} queued a job but answered ${status}`);
    }
    const declared = operation.responses?.[status] as Json | undefined;
    if (!declared) {
      throw new ContractViolation(
        `${where} answered ${status}, which the document does not declare (it declares ` +
          `${Object.keys(operation.responses ?? {}).join(', ')})\n  body: ${response.text.slice(0, 300)}`,
      );
    }
    if (response.method.toUpperCase() === 'HEAD') return;
    this.validateBody(where, response, declared.content, `${where}:${status}`);
  }

  /**
   * An answer Node's HTTP server wrote itself before any route ran (a malformed request, a request that did not
   * arrive in time, headers over 16 KiB, an Expect it does not meet): it belongs to no operation, so its status
   * must be one the document's root `x-http-layer-responses` declares, and its body that status's problem.
   */
  checkHttpLayer(response: Pick<ContractResponse, 'status' | 'headers' | 'text'>): void {
    contractStats.checked++;
    const where = 'The HTTP layer';
    const responses = (this.document[HTTP_LAYER_RESPONSES] ?? {}) as Json;
    const declared = responses[String(response.status)] as Json | undefined;
    if (!declared) {
      throw new ContractViolation(
        `${where} answered ${response.status}, which the document's ${HTTP_LAYER_RESPONSES} does not declare (it ` +
          `declares ${Object.keys(responses).join(', ') || 'none'})\n  body: ${response.text.slice(0, 300)}`,
      );
    }
    this.validateBody(
      where,
      { ...response, method: '', target: '' },
      declared.content as Json | undefined,
      `${HTTP_LAYER_RESPONSES}:${response.status}`,
    );
  }

  private validateBody(where: string, response: ContractResponse, content: Json | undefined, key: string): void {
    if (!content) {
      if (response.text.length > 0)
        throw new ContractViolation(
          `${where} answered ${response.status} with a body, which the document does not declare`,
        );
      return;
    }
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    const media = content[mediaType] as Json | undefined;
    if (!media) {
      throw new ContractViolation(
        `${where} answered ${response.status} as "${mediaType}"; the document declares ${Object.keys(content).join(', ')}`,
      );
    }
    if (!/[/+]json$/.test(mediaType) || !media.schema) return;
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      throw new ContractViolation(`${where} answered ${response.status} as ${mediaType} with a body that is not JSON`);
    }
    const validatorKey = `${key}:${mediaType}`;
    let validate = this.validators.get(validatorKey);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(media.schema) as Json);
      this.validators.set(validatorKey, validate);
    }
    if (!validate(body)) {
      const errors = (validate.errors ?? []).map(
        (e) => `${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
      );
      throw new ContractViolation(
        `${where} answered ${response.status} with a body its schema refuses:\n  ${errors.join('\n  ')}\n  body: ` +
          `${response.text.slice(0, 500)}`,
      );
    }
    const strictErrors = this.strict.errors(validatorKey, media.schema as Json, body);
    if (strictErrors.length > 0) {
      throw new ContractViolation(
        `${where} answered ${response.status} with a body the strict (JSON Schema 2020-12) check refuses:\n  ` +
          `${strictErrors.join('\n  ')}\n  body: ${response.text.slice(0, 500)}`,
      );
    }
  }
}

const contracts = new Map<string, Promise<Contract | null>>();

/**
 * The contract of the service at `baseUrl`, from its own /openapi.json; null when the server is not
 * this service (a downstream of the forwarding tests, the metrics port).
 */
export function contractOf(baseUrl: string): Promise<Contract | null> {
  let contract = contracts.get(baseUrl);
  if (!contract) {
    contract = fetch(`${baseUrl}/openapi.json`, { redirect: 'manual' })
      .then(async (response) => {
        if (response.status !== 200) return null;
        const document = (await response.json().catch(() => null)) as Json | null;
        return typeof document?.openapi === 'string' && document.paths ? new Contract(document) : null;
      })
      .catch((error: unknown) => {
        // Not reachable now (a test about a stopped server): ask again next time.
        contracts.delete(baseUrl);
        throw error;
      });
    contracts.set(baseUrl, contract);
  }
  return contract;
}
