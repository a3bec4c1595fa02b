import type { SharedCache } from '../../../platform/redis/shared-cache';

/** What a token endpoint issued: the token, and `expires_in` in seconds when it said. */
export interface IssuedToken {
  accessToken: string;
  expiresInS: number | undefined;
}

/** A token held for one method, with the version of the method it was obtained for. */
export interface HeldToken {
  version: string;
  accessToken: string;
  /** When it stops being used: before it expires (refreshAt). */
  refreshAtMs: number;
}

/** The lifetime assumed for a token issued without `expires_in` (RFC 6749 §5.1 makes it only recommended). */
export const DEFAULT_TOKEN_LIFETIME_S = 300;
/** The longest a token is kept, whatever `expires_in` says. */
export const MAX_TOKEN_LIFETIME_S = 24 * 3600;
/** A token is dropped this much before it expires, at most: the forward using it must still reach the target in time. */
const MAX_EARLY_MS = 60_000;
const EARLY_FRACTION = 0.1;

/**
 * When a token obtained at `obtainedMs` (the time its request was sent: the endpoint's clock started no
 * earlier) stops being used: min(60 s, 10 % of its lifetime) before it expires.
 */
export function refreshAt(obtainedMs: number, expiresInS: number | undefined): number {
  const lifetimeMs = Math.min(expiresInS ?? DEFAULT_TOKEN_LIFETIME_S, MAX_TOKEN_LIFETIME_S) * 1000;
  return obtainedMs + lifetimeMs - Math.min(MAX_EARLY_MS, lifetimeMs * EARLY_FRACTION);
}

/**
 * Where tokens are shared between processes (SharedTokens, through Redis): `obtain` answers a token another
 * process stored or the one `fetch` obtains, stored for the others; `refused` removes a refused token. Both
 * fall back to this process alone when the store is unavailable, and never throw for it.
 */
export interface SharedTokenStore {
  obtain(
    methodId: string,
    version: string,
    fetch: () => Promise<HeldToken>,
    requestTimeoutMs: number,
  ): Promise<HeldToken>;
  refused(methodId: string, version: string, accessToken: string): Promise<void>;
}

/**
 * Access tokens of oauth2-client-credentials methods, by method id: one request to the token endpoint
 * however many forwards need the token at once (single flight, per method version), reused until
 * refreshAt. Held in a SharedCache in this process's memory, and, when a SharedTokenStore is given, sealed
 * in Redis for the other processes, which then ask the endpoint once between them (decision 0123). The
 * SharedCache's invalidation notices reach every process: a token a target refused is forgotten
 * everywhere, after it has left Redis. A changed method has a new version, so its old token is not used
 * again even before the change notice arrives.
 */
export class TokenCache {
  /** Requests to a token endpoint in flight, by `${method id}@${version}`. */
  private readonly inflight = new Map<string, Promise<string>>();
  /** Refused tokens being removed from the shared store, by method id: not read back meanwhile. */
  private readonly refusing = new Map<string, Promise<void>>();

  constructor(
    private readonly store: SharedCache<HeldToken>,
    private readonly now: () => number,
    private readonly shared: SharedTokenStore | null = null,
  ) {}

  /**
   * The method's token: the one held when still fresh, else one from the shared store or the one `fetch`
   * obtains (shared by concurrent callers). `requestTimeoutMs` bounds `fetch`, and so how long another
   * process's request is waited for.
   */
  token(
    methodId: string,
    version: string,
    fetch: () => Promise<IssuedToken>,
    requestTimeoutMs: number,
  ): Promise<string> {
    const refusing = this.refusing.get(methodId);
    const held = refusing ? undefined : this.store.get(methodId);
    if (held && held.version === version && held.refreshAtMs > this.now()) return Promise.resolve(held.accessToken);
    const flight = `${methodId}@${version}`;
    const pending = this.inflight.get(flight);
    if (pending) return pending;
    const ask = (): Promise<HeldToken> => {
      const obtainedMs = this.now();
      return fetch().then((issued) => ({
        version,
        accessToken: issued.accessToken,
        refreshAtMs: refreshAt(obtainedMs, issued.expiresInS),
      }));
    };
    const start = (): Promise<string> => {
      const snapshot = this.store.snapshot();
      const obtained = this.shared ? this.shared.obtain(methodId, version, ask, requestTimeoutMs) : ask();
      return obtained.then((value) => {
        this.store.set(methodId, value, snapshot);
        return value.accessToken;
      });
    };
    const request = (refusing ? refusing.then(start) : start()).finally(() => this.inflight.delete(flight));
    this.inflight.set(flight, request);
    return request;
  }

  /**
   * A target answered 401 to a request that carried `accessToken`: it leaves the shared store, then is
   * forgotten here and in every process, unless a newer one has replaced it already.
   */
  async refused(methodId: string, version: string, accessToken: string): Promise<void> {
    if (this.shared) {
      const removed = this.shared.refused(methodId, version, accessToken);
      this.refusing.set(methodId, removed);
      try {
        await removed;
      } finally {
        if (this.refusing.get(methodId) === removed) this.refusing.delete(methodId);
      }
    }
    if (this.store.get(methodId)?.accessToken === accessToken) await this.store.invalidate(methodId);
  }

  /** The method changed (null: any may have), as the change notice says: its token goes, in this process. */
  forget(methodId: string | null): void {
    this.store.drop(methodId);
  }
}
