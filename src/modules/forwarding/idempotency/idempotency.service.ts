import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ProblemException } from '../../../platform/problem/problem';
import { isDatabaseUnavailable } from '../../../platform/problem/database-errors';
import { HeldWrites } from '../../../platform/database/held-writes';
import { everyPurgeInterval, purgeInBatches } from '../../../platform/database/purges';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { boundAad, SecretSealer } from '../../vault/secret-sealer';
import { CardVault } from '../../vault/card-vault.service';
import { IdempotencyErrors } from './idempotency.errors';
import { IdempotencyKeysRepository, IdempotencyKind, KeyRow } from './idempotency-keys.repository';

const IDEMPOTENCY_HEADER = 'idempotency-key';
/** How long a key is remembered (from its first use). */
const IDEMPOTENCY_TTL_HOURS = 24;
/** A synchronous claim still running after this was left by a process that died mid-forward: it may be taken over. */
const ABANDONED_AFTER_SECONDS = 300;
/**
 * The lease of a queued forward's claim: creating its job takes a statement or two (each bounded by the
 * API's 5 s query timeout), so a claim still running after this belongs to a request that has answered
 * (its release lost with the database, and its process gone before its held release was taken): it may
 * be taken over. The job's create checks its claim still holds the key, so a slow request that loses
 * its claim creates nothing (ForwardJobsRepository.create).
 */
const ASYNC_CLAIM_LEASE_SECONDS = 30;
/** Releases the database did not take, held until it does (releaseLater), at most this many. */
const MAX_HELD_RELEASES = 10_000;
/** How often each API process purges expired keys (onModuleInit). */
export const PURGE_EVERY_MS = 10 * 60 * 1000;
const PURGE_BATCH = 5_000;

/** The Idempotency-Key claim a job was to be created under no longer holds the key (taken over after its lease): no job. */
export class IdempotencyClaimLostError extends Error {
  constructor() {
    super('the idempotency claim no longer holds its key; no job was created');
    this.name = 'IdempotencyClaimLostError';
  }
}

/** A synchronous forward's answer as it is stored (sealed) and replayed. */
interface StoredResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

interface NewClaim {
  outcome: 'new';
  /** The key row's id while this claim holds it. */
  id: string;
  /** The key's keyed hash (what is kept of it). */
  keyHash: string;
  /**
   * Forget the key (nothing worth replaying happened, the answer cannot be stored, or the job it was
   * done with was discarded): a repeat sends again.
   */
  release(): Promise<void>;
  /** Sync: seal and store the answer, which every repeat within 24 h replays. */
  complete(response: StoredResponse): Promise<void>;
}

type IdempotencyClaim =
  | NewClaim
  | { outcome: 'replay'; jobId?: string; response?: StoredResponse }
  | { outcome: 'conflict' }
  | { outcome: 'in-progress' };

/** What a request's fingerprint is made of, but its key. */
interface FingerprintedRequest {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * The headers that shape the request sent downstream (all x-vault-forward-*), in a stable order. `key` is
 * the key's keyed hash (decision 0139; rows written before it used the key in clear).
 */
export function requestFingerprint(input: {
  merchantAccountId: string;
  key: string;
  kind: IdempotencyKind;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}): Buffer {
  const hash = createHash('sha256');
  // Lengths first, so that no two different requests print the same byte string.
  const part = (value: string | Buffer) => {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    hash.update(`${bytes.length}:`);
    hash.update(bytes);
  };
  // The merchant and key salt the hash: a body with a literal CVV cannot be matched against a table of guesses.
  part(input.merchantAccountId);
  part(input.key);
  part(input.kind);
  const shaping = Object.keys(input.headers)
    .map((name) => name.toLowerCase())
    .filter((name) => name.startsWith('x-vault-forward-') || name === 'content-type')
    .sort();
  for (const name of shaping) {
    const value = input.headers[name];
    part(name);
    part(Array.isArray(value) ? value.join('\n') : (value ?? ''));
  }
  part(input.body);
  return hash.digest();
}

/** Reads the Idempotency-Key header: undefined when absent, a 400 naming it when malformed. */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers[IDEMPOTENCY_HEADER];
  if (value === undefined) return undefined;
  // Printable ASCII only: the key goes into the sealed response's AAD and is forwarded as a header.
  if (Array.isArray(value) || !/^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(value)) {
    throw new ProblemException(
      IdempotencyErrors.invalidKey,
      'Idempotency-Key must be one value of 1–255 printable ASCII characters.',
      [{ location: 'header', name: 'Idempotency-Key', message: 'must be 1–255 printable ASCII characters' }],
    );
  }
  return value;
}

export function keyReusedProblem(): ProblemException {
  return new ProblemException(
    IdempotencyErrors.keyReused,
    'This Idempotency-Key was used within 24 hours for a different request; nothing was sent.',
    [{ location: 'header', name: 'Idempotency-Key', message: 'already used for a different request' }],
  );
}

export function keyInProgressProblem(): ProblemException {
  return new ProblemException(
    IdempotencyErrors.keyInProgress,
    'The first request with this Idempotency-Key is still running; retry once it has finished.',
    [{ location: 'header', name: 'Idempotency-Key', message: 'a request with this key is still running' }],
  );
}

/**
 * Idempotency-Key for POST /vault-forward, per merchant account, for 24 h. `claim` is one atomic
 * statement (an INSERT that takes the key, or takes over an expired or abandoned row), so of any
 * number of concurrent duplicates exactly one gets `new` and sends (or creates the job); the others
 * see the winner's row: `in-progress` while it runs (a queued claim waits up to `waitMs` for the job
 * to be attached), `replay` once it is done, `conflict` if their request differs.
 */
@Injectable()
export class IdempotencyService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Idempotency');
  private stopPurge: (() => void) | undefined;
  /**
   * Whether rows written before keys were hashed may remain (decision 0139): asked once, then after each
   * purge; while they may, a claim first turns its key's legacy row, if any, into the hashed form.
   */
  private legacyRows: Promise<boolean> | undefined;
  /** Claims to release once the database answers again (releaseLater). */
  private readonly heldReleases: HeldWrites;

  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly sealer: SecretSealer,
    private readonly vault: CardVault,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.heldReleases = new HeldWrites(
      'Idempotency-Key releases of refused requests',
      (ids) => this.keys.release(ids),
      MAX_HELD_RELEASES,
    );
  }

  onModuleInit(): void {
    this.stopPurge = everyPurgeInterval(
      PURGE_EVERY_MS,
      () => this.purgeExpired(),
      (error) => this.logger.warn(`purge of expired keys failed: ${error.message}`),
    );
  }

  onModuleDestroy(): void {
    this.stopPurge?.();
    this.heldReleases.close();
  }

  /**
   * Releases a claim whose request was refused while the database could not take the release: held
   * until it does (HeldWrites), so the key is free as soon as the database is back (a retry would
   * otherwise get 409 until the claim's lease runs out).
   */
  releaseLater(claimId: string): void {
    this.heldReleases.hold(claimId);
  }

  /**
   * Claims `key` (the caller's, in clear: it is hashed here and kept only as its keyed hash, decision 0139)
   * for `request`.
   */
  async claim(
    merchantAccountId: string,
    key: string,
    request: FingerprintedRequest,
    kind: IdempotencyKind,
    options: { waitMs?: number } = {},
  ): Promise<IdempotencyClaim> {
    const keyHash = await this.vault.keyedHash(merchantAccountId, 'idempotency-key', key);
    const fingerprint = requestFingerprint({ merchantAccountId, key: keyHash, kind, ...request });
    if (await this.mayHaveLegacyRows()) await this.upgradeLegacy(merchantAccountId, key, keyHash, kind, request);
    const deadline = this.clock.epochMs() + (options.waitMs ?? 0);
    for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
      const id = randomUUID();
      const taken = await this.keys
        .take({ id, merchantAccountId, key: keyHash, fingerprint, kind }, IDEMPOTENCY_TTL_HOURS, {
          sync: ABANDONED_AFTER_SECONDS,
          async: ASYNC_CLAIM_LEASE_SECONDS,
        })
        .catch((error: unknown) => {
          // The claim may have committed with its answer lost: it must not hold the key for a request refused here.
          if (isDatabaseUnavailable(error)) this.releaseLater(id);
          throw error;
        });
      if (taken) return this.newClaim(merchantAccountId, keyHash, id);

      const row = await this.keys.find(merchantAccountId, keyHash);
      // Released or expired between the two statements: try to take it again.
      if (!row) continue;
      if (row.kind !== kind || !row.fingerprint.equals(fingerprint)) return { outcome: 'conflict' };
      if (row.state === 'done') {
        if (row.job_id) return { outcome: 'replay', jobId: row.job_id };
        return { outcome: 'replay', response: this.openResponse(merchantAccountId, keyHash, row) };
      }
      const left = deadline - this.clock.epochMs();
      if (left <= 0) return { outcome: 'in-progress' };
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, Math.max(1, left))));
    }
  }

  /**
   * Deletes the keys whose 24 h have passed, in batches; returns how many went. Every API process runs
   * it (the synchronous path has keys without any worker): SKIP LOCKED lets concurrent purges split the
   * rows, and a claim taking over an expired key, instead of waiting on one another.
   */
  async purgeExpired(): Promise<number> {
    const total = await purgeInBatches((limit) => this.keys.purgeExpired(limit), { size: PURGE_BATCH });
    // Legacy rows (keys in clear) last 24 h at most: once none remains, claims stop looking for them.
    if (this.legacyRows !== undefined) this.legacyRows = this.keys.anyLegacy().catch(() => true);
    return total;
  }

  private mayHaveLegacyRows(): Promise<boolean> {
    this.legacyRows ??= this.keys.anyLegacy().catch((error: unknown) => {
      this.legacyRows = undefined;
      throw error;
    });
    return this.legacyRows;
  }

  /**
   * A row of this key written before keys were hashed, turned into the hashed form: its key, its
   * fingerprint (recomputed from this request when it is the same request, left as is, so a conflict,
   * otherwise) and its sealed answer (opened under the key in clear, sealed again under the hash).
   */
  private async upgradeLegacy(
    merchantAccountId: string,
    key: string,
    keyHash: string,
    kind: IdempotencyKind,
    request: FingerprintedRequest,
  ): Promise<void> {
    const row = await this.keys.legacy(merchantAccountId, key);
    if (!row) return;
    const same =
      row.kind === kind && row.fingerprint.equals(requestFingerprint({ merchantAccountId, key, kind, ...request }));
    const fingerprint = same
      ? requestFingerprint({ merchantAccountId, key: keyHash, kind, ...request })
      : row.fingerprint;
    const resealed =
      row.ciphertext === null
        ? null
        : this.sealer.sealJson(
            responseAad(merchantAccountId, keyHash, row.id),
            this.sealer.openJson<unknown>(
              responseAad(merchantAccountId, key, row.id),
              { ciphertext: row.ciphertext, wrappedKey: row.wrapped_key!, masterKeyId: row.master_key_id! },
              `idempotent response ${row.id}`,
            ),
          );
    await this.keys.upgrade(row.id, keyHash, fingerprint, resealed);
  }

  private newClaim(merchantAccountId: string, keyHash: string, id: string): NewClaim {
    return {
      outcome: 'new',
      id,
      keyHash,
      release: async () => {
        await this.keys.release([id]);
      },
      complete: async (response: StoredResponse) => {
        const sealed = this.sealer.sealJson(responseAad(merchantAccountId, keyHash, id), {
          status: response.status,
          headers: response.headers,
          body: response.body.toString('base64'),
        });
        await this.keys.complete(id, sealed);
      },
    };
  }

  private openResponse(merchantAccountId: string, keyHash: string, row: KeyRow): StoredResponse {
    const stored = this.sealer.openJson<{ status: number; headers: Record<string, string | string[]>; body: string }>(
      responseAad(merchantAccountId, keyHash, row.id),
      { ciphertext: row.ciphertext!, wrappedKey: row.wrapped_key!, masterKeyId: row.master_key_id! },
      `idempotent response ${row.id}`,
    );
    return { status: stored.status, headers: stored.headers, body: Buffer.from(stored.body, 'base64') };
  }
}

/**
 * The AAD of a stored answer: bound to the `key` column's value (the keyed hash; the key itself in legacy
 * rows), as SEALED_TABLES rotates it.
 */
function responseAad(merchantAccountId: string, keyColumn: string, id: string): string {
  return boundAad('idempotent-response', merchantAccountId, keyColumn, id);
}
