import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import type { DownstreamResponse } from '../sending/downstream-client';
import { keptDecodedAnswer } from '../record-bodies/decoded-bodies';
import {
  IdempotencyClaimLostError,
  IdempotencyService,
  idempotencyKeyOf,
  keyInProgressProblem,
  keyReusedProblem,
} from './idempotency.service';

/** Answers larger than this (or streamed) are passed on but not stored: a repeat sends again. */
export const MAX_STORED_RESPONSE_BYTES = 1024 * 1024;
const REPLAYED_HEADER = 'idempotent-replayed';

/** The answer of a forward, with the values the request carried that what rests of it must not hold. */
type SentResponse = DownstreamResponse & { withheld: readonly string[] };

/**
 * Idempotency-Key on the synchronous POST /vault-forward: the first request sends and its answer is
 * sealed and stored as a record keeps it (no filled value, security code or whole card number); a
 * repeat within 24 h (same merchant account, same key, same request) gets that answer again, marked
 * `idempotent-replayed: true`, and nothing reaches the downstream. A repeat while the first still
 * runs is a 409 (the caller retries; waiting would hold a connection for up to
 * the forward's timeout). A forward that fails with our own problem (nothing usable came back), or
 * whose answer is streamed or above 1 MiB, releases the key (once the database is back, if it is not).
 * A compressed answer is stored decoded, or, when it does not decode within the caps, with an empty
 * body and x-vault-forward-not-kept saying why (decision 0137): the repeat still sends nothing.
 */
@Injectable()
export class ForwardIdempotency {
  constructor(private readonly idempotency: IdempotencyService) {}

  async around(
    merchantAccountId: string,
    headers: IncomingHttpHeaders,
    body: Buffer,
    send: () => Promise<SentResponse>,
  ): Promise<DownstreamResponse> {
    const key = idempotencyKeyOf(headers);
    if (key === undefined) return send();
    const claim = await this.idempotency.claim(merchantAccountId, key, { headers, body }, 'sync');
    if (claim.outcome === 'conflict') throw keyReusedProblem();
    if (claim.outcome === 'in-progress') throw keyInProgressProblem();
    if (claim.outcome === 'replay') {
      const stored = claim.response!;
      return { status: stored.status, headers: { ...stored.headers, [REPLAYED_HEADER]: 'true' }, body: stored.body };
    }
    let response: SentResponse;
    try {
      response = await send();
    } catch (error) {
      await claim.release().catch(() => this.idempotency.releaseLater(claim.id));
      throw error;
    }
    if (response.body instanceof Readable || response.body.length > MAX_STORED_RESPONSE_BYTES) {
      await claim.release();
      return response;
    }
    // Kept for 24 h: what a record may keep of it, no more (decision 0113), decoded (decision 0137); the first
    // caller gets the answer whole, as it came.
    const kept = await keptDecodedAnswer({ headers: response.headers, body: response.body }, response.withheld);
    await claim.complete({ status: response.status, ...kept });
    return response;
  }
}

/**
 * Idempotency-Key on a queued POST /vault-forward (Prefer: respond-async): the first request creates
 * the job; a repeat within 24 h with the same request gets that job's id back (`replayed`, answered
 * 200 with the job) and creates nothing. Concurrent duplicates wait up to 5 s for the first to attach
 * its job (creating one takes milliseconds), then get a 409. If creating the job fails (database or
 * queue down), the key is released, at once or as soon as the database is back (releaseLater), and a
 * claim left running by a request that died is taken over after ASYNC_CLAIM_LEASE_SECONDS. `create` is
 * given the claim's id and the key's keyed hash (what the job row keeps of the key, decision 0139) and
 * must mark it done with its job in the statement that creates the job (ForwardJobsRepository.create),
 * and create nothing once the claim no longer holds the key, so a key is never left claimed by a job
 * that exists, nor pointing at one that does not.
 */
@Injectable()
export class QueuedIdempotency {
  constructor(private readonly idempotency: IdempotencyService) {}

  async around(
    merchantAccountId: string,
    key: string | null,
    headers: IncomingHttpHeaders,
    body: Buffer | undefined,
    create: (claim: { id: string; keyHash: string } | null) => Promise<string>,
  ): Promise<{ jobId: string; replayed: boolean }> {
    if (key === null) return { jobId: await create(null), replayed: false };
    const claim = await this.idempotency.claim(
      merchantAccountId,
      key,
      { headers, body: body ?? Buffer.alloc(0) },
      'async',
      { waitMs: 5_000 },
    );
    if (claim.outcome === 'conflict') throw keyReusedProblem();
    if (claim.outcome === 'in-progress') throw keyInProgressProblem();
    if (claim.outcome === 'replay') return { jobId: claim.jobId!, replayed: true };
    let jobId: string;
    try {
      jobId = await create({ id: claim.id, keyHash: claim.keyHash });
    } catch (error) {
      // Refused (a 503, most likely the database or queue away): the key must be free for the retry the
      // answer asks for, now or, if the database cannot take the release, as soon as it is back.
      await claim.release().catch(() => this.idempotency.releaseLater(claim.id));
      // Taken over after its lease by a retry, which creates the key's job: this request is the duplicate.
      if (error instanceof IdempotencyClaimLostError) throw keyInProgressProblem();
      throw error;
    }
    return { jobId, replayed: false };
  }
}
