import type { ConnectionOptions } from 'node:tls';
import { Agent } from 'undici';
import { LRUCache } from 'lru-cache';
import { guardedLookup } from '../../forwarding-setup/targets/addresses';
import type { ClientIdentity } from './outbound-request';

export const CONNECT_TIMEOUT_MS = 5_000;
/** Client identities kept at once, and how long one may sit unused before its pool is closed. */
const MAX_IDENTITIES = 1_000;
const IDENTITY_IDLE_MS = 5 * 60_000;

/**
 * The one place connect options are made, for every Agent the pool builds: a guarded Agent always
 * resolves through guardedLookup (the SSRF guard), whatever else the options say, so no
 * combination of identity and trust can leave it out. `ca` is the method's own bundle when it has
 * one (instead of the system roots), else the process-wide trust (undefined: Node's roots).
 */
export function connectOptions(
  trusted: boolean,
  identity: ClientIdentity | null,
  defaultCa: string[] | undefined,
): ConnectionOptions & { timeout: number } {
  const options: ConnectionOptions & { timeout: number } = { timeout: CONNECT_TIMEOUT_MS };
  const ca = identity?.ca ?? defaultCa;
  if (ca) options.ca = ca;
  if (identity) {
    options.cert = identity.cert;
    options.key = identity.privateKey;
    if (identity.passphrase !== undefined) options.passphrase = identity.passphrase;
  }
  // Last, so nothing above can replace it.
  if (!trusted) options.lookup = guardedLookup;
  return options;
}

interface Entry {
  agent: Agent;
  methodId: string;
}

/**
 * undici Agents by (trusted or guarded, client identity). The two without an identity live as long
 * as the process. Each mutual-TLS identity (method id and version) gets Agents of its own, so its
 * TLS sessions and keep-alive connections are reused across forwards but never serve another method
 * or merchant. Those are kept in an LRU that closes an Agent when it is evicted, idles out
 * (IDENTITY_IDLE_MS since its last use), is superseded by a newer version of its method, or is
 * dropped by a change notice. Closing lets requests in flight finish.
 */
export class DispatcherPool {
  private readonly guarded: Agent;
  private readonly trusted: Agent;
  private readonly identities: LRUCache<string, Entry>;
  /** Pool keys by method id, to drop every pool of a method (both trust modes, any version). */
  private readonly byMethod = new Map<string, Set<string>>();
  private closed = false;

  constructor(private readonly defaultCa: string[] | undefined) {
    this.guarded = this.build(false, null);
    this.trusted = this.build(true, null);
    this.identities = new LRUCache<string, Entry>({
      max: MAX_IDENTITIES,
      ttl: IDENTITY_IDLE_MS,
      updateAgeOnGet: true,
      ttlAutopurge: true,
      dispose: (entry, key) => {
        const keys = this.byMethod.get(entry.methodId);
        keys?.delete(key);
        if (keys?.size === 0) this.byMethod.delete(entry.methodId);
        entry.agent.close().catch(() => undefined);
      },
    });
  }

  get(trusted: boolean, identity: ClientIdentity | null): Agent {
    if (!identity) return trusted ? this.trusted : this.guarded;
    const key = `${trusted ? 'trusted' : 'guarded'}|${identity.key}`;
    const found = this.identities.get(key);
    if (found) return found.agent;
    if (this.closed) throw new Error('dispatcher pool closed');
    // A new version of the method: its older pools will not be used again.
    const keys = this.byMethod.get(identity.methodId);
    if (keys) for (const old of [...keys]) if (!old.endsWith(`|${identity.key}`)) this.identities.delete(old);
    const agent = this.build(trusted, identity);
    this.identities.set(key, { agent, methodId: identity.methodId });
    let set = this.byMethod.get(identity.methodId);
    if (!set) this.byMethod.set(identity.methodId, (set = new Set()));
    set.add(key);
    return agent;
  }

  /** Closes every pool of this method (null: of every method), in this process. */
  dropMethod(methodId: string | null): void {
    if (methodId === null) return this.identities.clear();
    for (const key of [...(this.byMethod.get(methodId) ?? [])]) this.identities.delete(key);
  }

  /** For tests and metrics: how many identity pools are open. */
  identityCount(): number {
    return this.identities.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    const agents = [this.guarded, this.trusted, ...[...this.identities.values()].map((e) => e.agent)];
    this.identities.clear();
    await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  }

  private build(trusted: boolean, identity: ClientIdentity | null): Agent {
    return new Agent({
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      connections: 256,
      pipelining: 1,
      // HTTP/1.1 only, as before undici 8 (which negotiates HTTP/2 by ALPN by default): the header rules,
      // the per-origin connection pool and the byte limits here are written and tested for HTTP/1.1.
      allowH2: false,
      connect: connectOptions(trusted, identity, this.defaultCa),
    });
  }
}
