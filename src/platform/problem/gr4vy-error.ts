import type { ProblemBody, ProblemFieldError, ProblemLocation } from './problem';

/**
 * Gr4vy's error body, the second rendering of our problems (decisions/0077). The official Gr4vy SDKs
 * build their typed errors (`Error400`, `Error404`, …) only from an `application/json` answer of this
 * shape; RFC 9457 problem+json reaches them as an untyped error. The code is Gr4vy's for the status
 * (ours where Gr4vy has none), the message the problem's detail; each field error becomes one entry of
 * `details`, typed with our code.
 */
export const GR4VY_ERROR_CONTENT_TYPE = 'application/json';

interface Gr4vyErrorDetail {
  location: ProblemLocation;
  /** The problem's code: what kind of error this field has. */
  type: string;
  /** A JSON pointer into the body (RFC 6901), or the parameter's or header's name elsewhere (Gr4vy's rule). */
  pointer: string;
  message: string;
}

interface Gr4vyErrorBody {
  type: 'error';
  code: string;
  status: number;
  message: string;
  details: Gr4vyErrorDetail[];
}

/**
 * Gr4vy's code for each status it documents an error for (its OpenAPI's `Error400` … `Error504`, the defaults of
 * `@gr4vy/sdk`'s error models): what a Gr4vy client branches on. Our finer code stays in each detail's `type`
 * and in the RFC 9457 body; a status Gr4vy documents no error for (413, 415, 422, 503, …) keeps our code
 * (docs/errors.md, decision 0131).
 */
const GR4VY_CODES: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'duplicate_record',
  425: 'too_early',
  429: 'too_many_requests',
  500: 'server_error',
  502: 'bad_gateway',
  504: 'gateway_timeout',
};

/** The code of Gr4vy's body for a problem of `status` and our `code`. */
export function gr4vyCode(status: number, code: string): string {
  return GR4VY_CODES[status] ?? code;
}

export function gr4vyErrorBody(problem: ProblemBody): Gr4vyErrorBody {
  return {
    type: 'error',
    code: gr4vyCode(problem.status, problem.code),
    status: problem.status,
    message: problem.detail,
    details: (problem.errors ?? []).map((error) => ({
      location: error.location,
      type: problem.code,
      pointer: pointerOf(error),
      message: error.message,
    })),
  };
}

/**
 * Our field names are dotted paths (`hosts.0`, `fields.key`), `body` meaning the whole body; a body
 * field becomes a JSON pointer. Query, path and header names stay as they are.
 */
function pointerOf(error: ProblemFieldError): string {
  if (error.location !== 'body') return error.name;
  if (error.name === 'body') return '';
  return error.name
    .split('.')
    .map((segment) => `/${segment.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    .join('');
}

const JSON_TYPE = ['application', 'json'] as const;
const PROBLEM_TYPE = ['application', 'problem+json'] as const;
/** A q-value as RFC 9110 12.4.2 writes it. */
const QVALUE = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/i;

/**
 * Whether the Accept header ranks `application/json` strictly above `application/problem+json`
 * (RFC 9110 12.5.1: each type takes the weight of the most specific range that matches it). No
 * Accept, the any-type wildcard, `application/*`, or naming both alike keeps problem+json: only a client that asks
 * for plain JSON, as the Gr4vy SDKs do, gets Gr4vy's body. One pass over a header Node bounds (16 KiB).
 */
export function prefersGr4vyError(accept: string | string[] | undefined): boolean {
  if (accept === undefined) return false;
  const text = Array.isArray(accept) ? accept.join(',') : accept;
  if (text.trim() === '') return false;
  const best = { json: { specificity: -1, q: 0 }, problem: { specificity: -1, q: 0 } };
  for (const range of text.split(',')) {
    const [mediaRange, ...params] = range.split(';');
    const [type, subtype, extra] = mediaRange.trim().toLowerCase().split('/');
    if (!type || !subtype || extra !== undefined) continue;
    let q = 1;
    const qParam = params.map((p) => p.trim()).find((p) => /^q=/i.test(p));
    if (qParam !== undefined) {
      if (!QVALUE.test(qParam)) continue; // a malformed weight: the range is ignored, not guessed at
      q = Number(qParam.slice(2));
    }
    for (const [key, [wantType, wantSubtype]] of [
      ['json', JSON_TYPE],
      ['problem', PROBLEM_TYPE],
    ] as const) {
      const specificity =
        type === wantType && subtype === wantSubtype
          ? 2
          : type === wantType && subtype === '*'
            ? 1
            : type === '*' && subtype === '*'
              ? 0
              : -1;
      const current = best[key];
      if (specificity > current.specificity || (specificity === current.specificity && q > current.q)) {
        if (specificity >= 0) best[key] = { specificity, q };
      }
    }
  }
  return best.json.q > best.problem.q;
}
