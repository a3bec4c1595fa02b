import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type Redis from 'ioredis';
import { LRUCache } from 'lru-cache';
import { closeRedis, REDIS } from './redis';

const CHANNEL = 'vault-forward:cache-invalidation';

/**
 * A per-process cache of rows the hot path reads on every request, kept coherent across processes:
 * a change in any process drops the entry everywhere (Redis pub/sub), and the TTL bounds staleness
 * when a notice is missed. Values stored here must be safe to hold in memory as they are in the
 * database (never decrypted card data).
 */
export class SharedCache<V extends NonNullable<unknown>> {
  private readonly entries: LRUCache<string, V>;
  /** Bumped by every invalidation, so a load that raced with one does not store what it read. */
  private generation = 0;

  constructor(
    readonly name: string,
    options: { max: number; ttlMs: number },
    private readonly announce: (name: string, key: string | null) => Promise<void>,
  ) {
    this.entries = new LRUCache<string, V>({ max: options.max, ttl: options.ttlMs });
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
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
  }
}

/**
 * One Redis subscription per process carries invalidation notices for every SharedCache. Without
 * Redis (the embedded single-process mode) notices stay local, which is all a single process needs.
 */
@Injectable()
export class SharedCaches implements OnModuleDestroy {
  private readonly logger = new Logger('SharedCaches');
  /** Each cache's drop(), by name. */
  private readonly caches = new Map<string, (key: string | null) => void>();
  private subscriber: Redis | null = null;

  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  create<V extends NonNullable<unknown>>(name: string, options: { max: number; ttlMs: number }): SharedCache<V> {
    if (this.caches.has(name)) throw new Error(`shared cache "${name}" exists already`);
    const cache = new SharedCache<V>(name, options, (n, key) => this.publish(n, key));
    this.caches.set(name, (key) => cache.drop(key));
    this.subscribe();
    return cache;
  }

  async onModuleDestroy(): Promise<void> {
    if (this.subscriber) await closeRedis(this.subscriber);
  }

  private async publish(name: string, key: string | null): Promise<void> {
    if (!this.redis) return;
    await this.redis.publish(CHANNEL, JSON.stringify([name, key])).catch((error: Error) => {
      // The TTL still bounds how long other processes serve the old entry.
      this.logger.warn(`could not announce a change to ${name}: ${error.message}`);
    });
  }

  private subscribe(): void {
    if (!this.redis || this.subscriber) return;
    const subscriber = this.redis.duplicate();
    this.subscriber = subscriber;
    let connectedBefore = false;
    subscriber.on('message', (_channel: string, message: string) => {
      const [name, key] = JSON.parse(message) as [string, string | null];
      this.caches.get(name)?.(key);
    });
    subscriber.on('ready', () => {
      // Notices sent while the connection was down are lost: start every cache afresh.
      if (connectedBefore) for (const drop of this.caches.values()) drop(null);
      connectedBefore = true;
    });
    subscriber.on('error', (error: Error) => this.logger.warn(`cache invalidation channel: ${error.message}`));
    // Not awaited: with Redis down the API still starts, and the TTLs bound staleness.
    void subscriber.subscribe(CHANNEL).catch((error: Error) => this.logger.warn(`cannot subscribe: ${error.message}`));
  }
}
