import { KeyObject, sign, SignKeyObjectInput } from 'node:crypto';
import { availableParallelism } from 'node:os';

/**
 * Private-key signatures (RSA, ECDSA, EdDSA) are made on libuv's thread pool through node:crypto's
 * callback form of `sign`, never on the event loop (decision 0144): a 4,096-bit RSA signature takes
 * milliseconds of CPU, and nine of them on the loop would hold every other request of the process,
 * /health/live and other merchants' forwards included, for all of that time.
 *
 * At most SIGNING_THREADS run at once in a process, the others wait in arrival order: a core is left to
 * the event loop (on two cores, two signing threads made its delays worse than one did, decision 0144),
 * and the pool's four threads are shared with DNS lookups, file writes and key checks. One thread makes
 * about 200 RSA-4,096 signatures a second.
 */
const SIGNING_THREADS = Math.max(1, Math.min(2, availableParallelism() - 1));
let running = 0;
const waiting: Array<() => void> = [];

function acquire(): Promise<void> {
  if (running < SIGNING_THREADS) {
    running++;
    return Promise.resolve();
  }
  return new Promise((resolve) => waiting.push(resolve));
}

/** Hands the slot to the next signature waiting, or frees it. */
function release(): void {
  const next = waiting.shift();
  if (next) next();
  else running--;
}

/** `crypto.sign(algorithm, data, key)`, off the event loop and within the process's signing slots. */
export async function signOffLoop(
  algorithm: string | null,
  data: Buffer,
  key: KeyObject | SignKeyObjectInput,
): Promise<Buffer> {
  await acquire();
  try {
    return await new Promise<Buffer>((resolve, reject) =>
      sign(algorithm, data, key, (error, signature) => (error ? reject(error) : resolve(signature))),
    );
  } finally {
    release();
  }
}
