import { mintToken, readToken, SigningKey } from './keys';

/** An RFC 9457 problem as the API sends it. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code?: string;
  errors?: Array<{ location: string; name: string; message: string }>;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail || problem.title);
  }

  /** The messages the problem gives for a field (`hosts` also matches `hosts.0`, `fields.x` only itself). */
  fieldMessages(name: string): string[] {
    return (this.problem.errors ?? [])
      .filter((e) => e.name === name || e.name.startsWith(`${name}.`) || e.name.startsWith(`${name}[`))
      .map((e) => e.message);
  }

  /** Whether some error names a field not in `shown`, so the general message must carry it. */
  hasErrorsBeyond(shown: string[]): boolean {
    return (this.problem.errors ?? []).some(
      (e) => !shown.some((name) => e.name === name || e.name.startsWith(`${name}.`) || e.name.startsWith(`${name}[`)),
    );
  }
}

export interface Page<T> {
  items: T[];
  limit: number;
  next_cursor: string | null;
  previous_cursor: string | null;
}

export const DEFAULT_SCOPES = ['*.read', '*.write'];

type Credentials = { kind: 'key'; signing: SigningKey; scopes: string[] } | { kind: 'token'; token: string };

export interface Session {
  credentials: Credentials;
  keyId: string | null;
  /** Instance keys choose the merchant per request; merchant keys act for their own. */
  mode: 'instance' | 'merchant';
  /** The merchant key's account, when the API told us (GET /api-keys). */
  ownMerchantId: string | null;
}

let session: Session | null = null;
let cachedToken: { token: string; expiresAt: number } | null = null;

export function currentSession(): Session | null {
  return session;
}

export function signOut(): void {
  session = null;
  cachedToken = null;
}

async function bearer(credentials: Credentials): Promise<string> {
  if (credentials.kind === 'token') return credentials.token;
  // A fresh token well before the old one expires (the server allows 5 s of clock skew).
  if (!cachedToken || cachedToken.expiresAt - 30 < Date.now() / 1000)
    cachedToken = await mintToken(credentials.signing, credentials.scopes);
  return cachedToken.token;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  query?: Record<string, string | number | undefined | null>;
  /** For instance keys: the merchant account to act for (x-merchant-account-id). */
  merchant?: string | null;
}

async function call<T>(
  credentials: Credentials,
  mode: Session['mode'],
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  const headers: Record<string, string> = {
    authorization: `Bearer ${await bearer(credentials)}`,
    // Both named alike: errors come as RFC 9457 problems (ApiError reads them), not as Gr4vy's error body.
    accept: 'application/json, application/problem+json',
  };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (mode === 'instance' && options.merchant) headers['x-merchant-account-id'] = options.merchant;
  let response: Response;
  try {
    response = await fetch(url, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, {
      type: 'network',
      title: 'The service did not answer',
      status: 0,
      detail: 'The service could not be reached. Check that it is running, then try again.',
    });
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let body: unknown = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  if (!response.ok) {
    const problem = (
      body && typeof body === 'object'
        ? body
        : { type: 'about:blank', title: response.statusText, status: response.status, detail: text.slice(0, 200) }
    ) as Problem;
    throw new ApiError(response.status, problem);
  }
  return body as T;
}

export function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  if (!session)
    return Promise.reject(
      new ApiError(401, {
        type: '/errors/unauthorized',
        title: 'Not signed in',
        status: 401,
        detail: 'Sign in first.',
      }),
    );
  return call<T>(session.credentials, session.mode, path, options);
}

/**
 * Signs in: the key's row in GET /api-keys tells an instance key from a merchant-bound one (and
 * names its account); a token without api-keys.read is told apart by GET /merchant-accounts
 * (403 instance-key-required for a merchant key).
 */
export async function signIn(credentials: Credentials): Promise<Session> {
  cachedToken = null;
  const keyId = credentials.kind === 'key' ? credentials.signing.keyId : readToken(credentials.token).keyId;
  let mode: Session['mode'] | null = null;
  let ownMerchantId: string | null = null;
  // The key's own row says whether it is bound to a merchant account (needs api-keys.read).
  try {
    const keys = await call<Page<{ id: string; merchant_account_id: string | null }>>(
      credentials,
      'merchant',
      '/api-keys',
      { query: { limit: 100 } },
    );
    const own = keys.items.find((k) => k.id === keyId);
    if (own) {
      mode = own.merchant_account_id === null ? 'instance' : 'merchant';
      ownMerchantId = own.merchant_account_id;
    }
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) throw error;
  }
  if (!mode) {
    // Otherwise: only instance keys may list merchant accounts.
    try {
      await call(credentials, 'instance', '/merchant-accounts', { query: { limit: 1 } });
      mode = 'instance';
    } catch (error) {
      if (!(error instanceof ApiError) || error.problem.code !== 'instance-key-required') throw error;
      mode = 'merchant';
    }
  }
  session = { credentials, keyId, mode, ownMerchantId };
  return session;
}
