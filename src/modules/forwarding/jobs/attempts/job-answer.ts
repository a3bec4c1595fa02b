import { Readable } from 'node:stream';
import { ProblemException } from '../../../../platform/problem/problem';
import { ForwardingErrors } from '../../request/forwarding.errors';
import type { DownstreamResponse } from '../../sending/downstream-client';
import { parseRetryAfter } from './retry-policy';

/** The most of a downstream answer a job keeps (the same limit as the synchronous path's). */
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** The downstream's Retry-After in ms from `nowMs`, on a 429 or 503 only. */
export function retryAfterOf(response: DownstreamResponse, nowMs: number): number | null {
  if (response.status !== 429 && response.status !== 503) return null;
  return parseRetryAfter(response.headers['retry-after'], nowMs);
}

/** The answer whole; a stream from the downstream client already fails past 10 MiB, this is the job's own bound. */
export async function readWhole(body: Buffer | Readable): Promise<Buffer> {
  if (!(body instanceof Readable)) return body;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      body.destroy();
      throw new ProblemException(
        ForwardingErrors.downstreamResponseTooLarge,
        `The target answered with more than ${MAX_RESPONSE_BYTES} bytes.`,
      );
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
