import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  PUBLISH_TIMEOUT_MS,
  REDIS,
  REDIS_AVAILABILITY,
  RedisAvailability,
  RedisClient,
} from '../../../platform/redis/redis';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { withTimeout } from '../../../platform/time/with-timeout';
import { boundAad, SecretSealer } from '../../vault/secret-sealer';
import type { HeldToken, SharedTokenStore } from './token-cache';

const KEY_PREFIX = 'vault-forward:oauth2-token:';
/** A Redis command here saves a token request at most: a Redis that does not answer quickly is not waited for. */
const COMMAND_TIMEOUT_MS = PUBLISH_TIMEOUT_MS;
/** How often a process waiting on another one's token request looks for the token. */
const WAIT_STEP_MS = 50;
/** Deletes KEYS[1] only while it still holds ARGV[1]: a lock another process took since, or a newer token, stays. */
const DELETE_IF_EQUAL = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

/** The Redis key of a method version's sealed token; its request's lock is `<key>:lock`. */
function sharedTokenKey(methodId: string, version: string): string {
  return `${KEY_PREFIX}${methodId}:${version}`;
}

/** What the sealed value holds. */
interface SealedToken {
  accessToken: string;
  refreshAtMs: number;
}

/**
 * The access tokens of oauth2-client-credentials methods shared by every process through Redis, so a fleet
 * asks a token endpoint once per token lifetime (decision 0123). A token is stored sealed by SecretSealer
 * (the vault's envelope, bound to the method id and version), never in clear, and expires from Redis when
 * the processes stop using it (refreshAt). A process that finds no token takes a short lock (SET NX PX, as
 * long as its token request may take) and asks; the others wait for the token it stores, and ask themselves
 * when the lock goes without one (the request failed, or its process died). Without Redis, or with Redis not
 * answering, every call falls back to asking directly: a forward never fails because Redis is unavailable.
 */
@Injectable()
export class SharedTokens implements SharedTokenStore {
  private readonly logger = new Logger('SharedTokens');

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient | null,
    @Inject(REDIS_AVAILABILITY) private readonly availability: RedisAvailability | null,
    private readonly sealer: SecretSealer,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async obtain(
    methodId: string,
    version: string,
    fetch: () => Promise<HeldToken>,
    requestTimeoutMs: number,
  ): Promise<HeldToken> {
    if (!this.redis) return fetch();
    const key = sharedTokenKey(methodId, version);
    const lock = `${key}:lock`;
    const found = await this.read(key, methodId, version);
    if (found) return found.held;
    const owner = randomUUID();
    const lockMs = Math.max(1, Math.ceil(requestTimeoutMs));
    const locked = await this.command((redis) => redis.set(lock, owner, 'PX', lockMs, 'NX'));
    if (locked === 'OK') {
      try {
        return await this.fetchAndStore(key, methodId, version, fetch);
      } finally {
        await this.command((redis) => redis.eval(DELETE_IF_EQUAL, 1, lock, owner));
      }
    }
    // null: another process is asking; undefined: Redis did not answer, so no one can be waited for.
    if (locked === null) {
      const deadline = this.clock.epochMs() + lockMs;
      while (this.clock.epochMs() < deadline) {
        await delay(WAIT_STEP_MS);
        const stored = await this.read(key, methodId, version);
        if (stored) return stored.held;
        // Only Redis saying the lock is gone, or Redis being down, ends the wait: an answer that is late on a
        // busy machine is no sign that the other process stopped asking, and asking too would ask twice.
        const stillLocked = await this.command((redis) => redis.exists(lock));
        if (stillLocked === 0 || (stillLocked === undefined && this.availability?.available === false)) break;
      }
    }
    return this.fetchAndStore(key, methodId, version, fetch);
  }

  /** A target refused `accessToken`: it leaves Redis, unless a newer token has replaced it there already. */
  async refused(methodId: string, version: string, accessToken: string): Promise<void> {
    if (!this.redis) return;
    const key = sharedTokenKey(methodId, version);
    const found = await this.read(key, methodId, version);
    if (found?.held.accessToken === accessToken)
      await this.command((redis) => redis.eval(DELETE_IF_EQUAL, 1, key, found.raw));
  }

  private async fetchAndStore(
    key: string,
    methodId: string,
    version: string,
    fetch: () => Promise<HeldToken>,
  ): Promise<HeldToken> {
    const held = await fetch();
    const ttlMs = Math.floor(held.refreshAtMs - this.clock.epochMs());
    if (ttlMs > 0) {
      const value = this.sealer.sealText(tokenAad(methodId, version), {
        accessToken: held.accessToken,
        refreshAtMs: held.refreshAtMs,
      } satisfies SealedToken);
      await this.command((redis) => redis.set(key, value, 'PX', ttlMs));
    }
    return held;
  }

  /** The stored token, still usable, with the raw value it was read from; null when none or unreadable. */
  private async read(key: string, methodId: string, version: string): Promise<{ held: HeldToken; raw: string } | null> {
    const raw = await this.command((redis) => redis.get(key));
    if (typeof raw !== 'string') return null;
    let token: SealedToken;
    try {
      token = this.sealer.openText<SealedToken>(tokenAad(methodId, version), raw, key);
    } catch (error) {
      // Sealed under a master key this process lacks, or not ours: asked for again, as if absent.
      this.logger.debug(`cannot open the shared token ${key}: ${(error as Error).name}`);
      return null;
    }
    if (!(token.refreshAtMs > this.clock.epochMs())) return null;
    return { held: { version, accessToken: token.accessToken, refreshAtMs: token.refreshAtMs }, raw };
  }

  /** The command's answer, or undefined when Redis is unavailable or does not answer in time (never a throw). */
  private async command<T>(run: (redis: RedisClient) => Promise<T>): Promise<T | undefined> {
    if (!this.redis || this.availability?.available === false) return undefined;
    try {
      return await withTimeout(run(this.redis), COMMAND_TIMEOUT_MS);
    } catch (error) {
      // RedisAvailability logs an outage once; the reason names no key's value.
      this.logger.debug(`shared token store unavailable: ${this.availability?.scrub((error as Error).message)}`);
      return undefined;
    }
  }
}

function tokenAad(methodId: string, version: string): string {
  return boundAad('oauth2-access-token', methodId, version);
}
