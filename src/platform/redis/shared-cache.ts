import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Metrics } from '../metrics/metrics.service';
import {
  closeRedis,
  duplicateRedis,
  isCluster,
  PUBLISHER_OPTIONS,
  REDIS,
  REDIS_AVAILABILITY,
  RedisAvailability,
  RedisClient,
} from './redis';

/**
 * On a Cluster the subscription lives on one node; when that node is lost ioredis moves it to another,
 * and notices published in between are lost. Caches start afresh when a node leaves, and once more after
 * this long, by when the subscription has moved (a reconnection to a live node takes milliseconds).
 */
const CLUSTER_RESUBSCRIBE_MS = 1_000;

const CHANNEL = 'vault-forward:cache-invalidation';

/**
 * A per-process cache of rows the hot path reads on every request, kept coherent across processes:
 * a change in any process drops the entry everywhere (Redis pub/sub), and the TTL bounds staleness
 * when a notice is missed. Values stored here must be safe to hold in memory as they are in the
 * database (never decrypted card data).
 */
export interface SharedCacheOptions {
  max: number;
  ttlMs: number;
  onDrop?: (key: string | null) => void;
  onLookup?: (hit: boolean) => void;
}

export class SharedCache<V extends NonNullable<unknown>> {
  private readonly entries: LRUCache<string, V>;
  /** Bumped by every invalidation, so a load that raced with one does not store what it read. */
  private generation = 0;
  /** Called after every invalidation, local or announced, so a cache derived from this one follows. */
  private readonly onDrop?: (key: string | null) => void;
  /** Counts hits and misses (metrics). */
  private readonly onLookup?: (hit: boolean) => void;

  constructor(
    readonly name: string,
    options: SharedCacheOptions,
    private readonly announce: (name: string, key: string | null) => Promise<void>,
  ) {
    this.entries = new LRUCache<string, V>({ max: options.max, ttl: options.ttlMs });
    this.onDrop = options.onDrop;
    this.onLookup = options.onLookup;
  }

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    this.onLookup?.(value !== undefined);
    return value;
  }

  /**
   * The values of `ids`, from the cache where it has them; the others come from one call to `load`
   * (which returns what it found, by id) and are cached unless an invalidation raced that load.
   */
  async readThrough(
    ids: readonly string[],
    keyOf: (id: string) => string,
    load: (missing: string[]) => Promise<Iterable<readonly [string, V]>>,
  ): Promise<Map<string, V>> {
    const found = new Map<string, V>();
    const missing: string[] = [];
    for (const id of ids) {
      const value = this.get(keyOf(id));
      if (value !== undefined) found.set(id, value);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const snapshot = this.snapshot();
    for (const [id, value] of await load(missing)) {
      found.set(id, value);
      this.set(keyOf(id), value, snapshot);
    }
    return found;
  }

  /** Call before reading the database; pass the result to set(). */
  snapshot(): number {
    return this.generation;
  }

  set(key: string, value: V, snapshot: number): void {
    if (snapshot === this.generation) this.entries.set(key, value);
  }

  /** Drops the entry here at once and in every other process as soon as Redis delivers the notice. */
  async invalidate(key: string): Promise<void> {
    this.drop(key);
    await this.announce(this.name, key);
  }

  async invalidateAll(): Promise<void> {
    this.drop(null);
    await this.announce(this.name, null);
  }

  /** @internal the bus applies notices from other processes here. */
  drop(key: string | null): void {
    this.generation++;
    if (key === null) this.entries.clear();
    else this.entries.delete(key);
    this.onDrop?.(key);
  }
}

/**
 * One Redis subscription per process carries invalidation notices for every SharedCache. Without
 * Redis (the embedded single-process mode) notices stay local, which is all a single process needs.
 * Notices are published on a connection of their own whose commands time out (PUBLISHER_OPTIONS), so
 * an announcing write is answered even with Redis gone.
 */
@Injectable()
export class SharedCaches implements OnModuleDestroy {
  private readonly logger = new Logger('SharedCaches');
  /** Each cache's drop(), by name. */
  private readonly caches = new Map<string, (key: string | null) => void>();
  private subscriber: RedisClient | null = null;
  private publisher: RedisClient | null = null;
  private resubscribeTimer: NodeJS.Timeout | undefined;
  private publisherWasReady = false;
  private subscribed: Promise<void> = Promise.resolve();

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient | null,
    @Inject(REDIS_AVAILABILITY) private readonly availability: RedisAvailability | null,
    private readonly metrics: Metrics,
  ) {}

  create<V extends NonNullable<unknown>>(name: string, options: Omit<SharedCacheOptions, 'onLookup'>): SharedCache<V> {
    if (this.caches.has(name)) throw new Error(`shared cache "${name}" exists already`);
    const onLookup = this.metrics.cacheLookups(name);
    const cache = new SharedCache<V>(name, { ...options, onLookup }, (n, key) =>
      this.publish(n, key).then(() => undefined),
    );
    this.caches.set(name, (key) => cache.drop(key));
    this.subscribe();
    this.publisherClient();
    return cache;
  }

  /**
   * Drops `key` of the cache `name` here and in every process, for a process that changes what another
   * one caches without holding the cache itself (the CLI revoking an API key). Resolves to whether the
   * notice went out; when it did not, the cache's TTL bounds how long other processes keep the entry.
   */
  async invalidate(name: string, key: string | null): Promise<boolean> {
    this.caches.get(name)?.(key);
    return this.publish(name, key);
  }

  /** Resolves once this process receives notices (at once without Redis); for tests and start-up checks. */
  whenSubscribed(): Promise<void> {
    return this.subscribed;
  }

  async onModuleDestroy(): Promise<void> {
    if (this.subscriber) await closeRedis(this.subscriber);
    if (this.publisher) await closeRedis(this.publisher);
    clearTimeout(this.resubscribeTimer);
  }

  private publisherClient(): RedisClient | null {
    if (!this.redis) return null;
    if (!this.publisher) {
      const publisher = duplicateRedis(this.redis, PUBLISHER_OPTIONS);
      this.availability?.watch('publisher', publisher);
      publisher.on('ready', () => (this.publisherWasReady = true));
      this.publisher = publisher;
    }
    return this.publisher;
  }

  private async publish(name: string, key: string | null): Promise<boolean> {
    const publisher = this.publisherClient();
    if (!publisher) return false;
    // Known to be down (it was connected and is reconnecting): do not make the write wait for the timeout.
    if (this.publisherWasReady && publisher.status !== 'ready') return false;
    try {
      await publisher.publish(CHANNEL, JSON.stringify([name, key]));
      return true;
    } catch (error) {
      // RedisAvailability logs the outage once; one line per lost notice would flood the log during it.
      this.logger.debug(`could not announce a change to ${name}: ${(error as Error).message}`);
      return false;
    }
  }

  private subscribe(): void {
    if (!this.redis || this.subscriber) return;
    // Retried without limit: a subscription that failed at start would otherwise never be made, and nothing waits on it.
    const subscriber = duplicateRedis(this.redis, { maxRetriesPerRequest: null });
    this.availability?.watch('subscriber', subscriber);
    this.subscriber = subscriber;
    let connectedBefore = false;
    subscriber.on('message', (_channel: string, message: string) => {
      let notice: unknown;
      try {
        notice = JSON.parse(message);
      } catch {
        return; // not ours; a throw here would be an uncaught exception
      }
      if (!Array.isArray(notice) || typeof notice[0] !== 'string') return;
      const key: unknown = notice[1];
      if (key !== null && typeof key !== 'string') return;
      this.caches.get(notice[0])?.(key);
    });
    subscriber.on('ready', () => {
      // Notices sent while the connection was down are lost: start every cache afresh.
      if (connectedBefore) this.dropAll();
      connectedBefore = true;
    });
    // A Cluster stays ready when one node goes; PUBLISH reaches every node, so only the subscription's own may matter.
    if (isCluster(subscriber))
      subscriber.on('-node', () => {
        this.dropAll();
        clearTimeout(this.resubscribeTimer);
        this.resubscribeTimer = setTimeout(() => this.dropAll(), CLUSTER_RESUBSCRIBE_MS).unref();
      });
    // Not awaited: with Redis down the API still starts, and the TTLs bound staleness. ioredis
    // resubscribes by itself on every reconnection; failures are logged by RedisAvailability.
    this.subscribed = subscriber.subscribe(CHANNEL).then(() => undefined);
    this.subscribed.catch(() => undefined);
  }

  private dropAll(): void {
    for (const drop of this.caches.values()) drop(null);
  }
}
