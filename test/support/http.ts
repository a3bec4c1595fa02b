import { contractOf } from './contract';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/**
 * A plain fetch against the running server that always reads the body, JSON or not. Every answer is
 * held against the OpenAPI document the server publishes (test/support/contract.ts): an undeclared
 * status, content type or body shape fails the calling test.
 */
export async function http<T = any>(
  baseUrl: string,
  path: string,
  init: {
    method?: string;
    token?: string;
    headers?: Record<string, string>;
    body?: unknown;
    rawBody?: string | Buffer;
    /** Aborts the request (a deadline: AbortSignal.timeout), which then rejects. */
    signal?: AbortSignal;
  } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: string | Buffer | undefined;
  if (init.rawBody !== undefined) body = init.rawBody;
  else if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  // Fetched before the request: the server may be gone after it (tests of shutdown). Unreachable: no check.
  const contract = await contractOf(baseUrl).catch(() => null);
  const method = init.method ?? 'GET';
  // Never follow redirects: a test must see exactly what the service answered.
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: 'manual', signal: init.signal });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  contract?.check({ method, target: path, status: response.status, headers: response.headers, text });
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** Asserts the RFC 9457 shape every error of ours has, and returns the body. */
export function expectProblem(result: HttpResult, status: number, code: string): Record<string, any> {
  expect({ status: result.status, code: result.body?.code }).toEqual({ status, code });
  expect(result.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(result.body).toMatchObject({ type: `/errors/${code}`, status, code });
  expect(typeof result.body.title).toBe('string');
  expect(typeof result.body.detail).toBe('string');
  expect(result.body.detail.length).toBeGreaterThan(0);
  return result.body;
}
