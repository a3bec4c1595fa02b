import { echoed, MAX_ECHOED_CHARS } from './echo';

/**
 * RFC 9457 problem details. Every error the service itself produces is one of these.
 *
 * Each feature module declares its own error codes with `defineProblem` (in a `*.errors.ts` file);
 * they all land in one registry, which the exception filter renders, `/errors/{code}` explains and
 * the OpenAPI document lists. A code, once published, never changes meaning: clients switch on it.
 */
export type ProblemLocation = 'header' | 'query' | 'body' | 'path';

export interface ProblemFieldError {
  location: ProblemLocation;
  name: string;
  message: string;
}

export interface ProblemDefinition {
  code: string;
  status: number;
  title: string;
  /** What the problem means and how to fix it; served at /errors/{code}. */
  description: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  instance?: string;
  request_id?: string;
  errors?: ProblemFieldError[];
}

/** Relative to the service's own base URL, where `/errors/{code}` describes the problem. */
export const PROBLEM_TYPE_PREFIX = '/errors/';

const registry = new Map<string, ProblemDefinition>();

export function defineProblem(definition: ProblemDefinition): ProblemDefinition {
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(definition.code)) {
    throw new Error(`problem code "${definition.code}" must be kebab-case`);
  }
  const existing = registry.get(definition.code);
  if (existing && existing !== definition) {
    throw new Error(`problem code "${definition.code}" is defined twice`);
  }
  registry.set(definition.code, definition);
  return definition;
}

export function problemDefinitions(): ProblemDefinition[] {
  return [...registry.values()].sort((a, b) => a.code.localeCompare(b.code));
}

export function findProblemDefinition(code: string): ProblemDefinition | undefined {
  return registry.get(code);
}

export function problemType(code: string): string {
  return `${PROBLEM_TYPE_PREFIX}${code}`;
}

/**
 * Bounds of a problem's text, a net under the sites that quote input through `echoed`: whatever a
 * message repeats, an answer stays a few kilobytes.
 */
const MAX_DETAIL_CHARS = 1_000;
const MAX_FIELD_NAME_CHARS = MAX_ECHOED_CHARS;
const MAX_FIELD_MESSAGE_CHARS = 300;
const MAX_FIELD_ERRORS = 20;

/**
 * Thrown anywhere (services, guards, pipes); rendered by the one ProblemFilter.
 * `detail` is shown to the caller as is: it must never contain card data or secrets.
 */
export class ProblemException extends Error {
  readonly headers: Record<string, string>;

  readonly detail: string;
  readonly errors?: ProblemFieldError[];

  constructor(
    readonly definition: ProblemDefinition,
    detail: string,
    errors?: ProblemFieldError[],
    headers: Record<string, string> = {},
  ) {
    detail = echoed(detail, MAX_DETAIL_CHARS);
    super(`${definition.code}: ${detail}`);
    this.detail = detail;
    this.errors = errors?.slice(0, MAX_FIELD_ERRORS).map((error) => ({
      location: error.location,
      name: echoed(error.name, MAX_FIELD_NAME_CHARS),
      message: echoed(error.message, MAX_FIELD_MESSAGE_CHARS),
    }));
    this.name = 'ProblemException';
    this.headers = headers;
  }

  get status(): number {
    return this.definition.status;
  }

  toBody(): ProblemBody {
    return {
      type: problemType(this.definition.code),
      title: this.definition.title,
      status: this.definition.status,
      detail: this.detail,
      code: this.definition.code,
      ...(this.errors && this.errors.length > 0 ? { errors: this.errors } : {}),
    };
  }
}
