import { randomBytes, randomFillSync } from 'node:crypto';

/**
 * Bytes from node:crypto's CSPRNG for data keys and IVs, drawn from a pool it fills POOL_BYTES at a
 * time. On Node.js 24 (OpenSSL 3.5) a call to the generator costs ≈ 5 µs whatever its size, 15–20 µs on a
 * loaded machine, and sealing one record takes three (its data key, that key's IV, the wrap's IV): in a
 * profile of card forwards they were a tenth of the API's busy time (docs/decisions/0111). Node.js
 * draws randomUUID() from a pool the same way. Each byte is handed out once and zeroed in the pool as
 * it is, so the pool holds only bytes nobody has yet; each process has its own (cluster workers are
 * new processes, not copies of a parent's memory).
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let next = POOL_BYTES;

export function randomBytesFromPool(size: number): Buffer {
  if (size > POOL_BYTES / 4) return randomBytes(size);
  if (next + size > POOL_BYTES) {
    randomFillSync(pool);
    next = 0;
  }
  // Buffer.alloc, not allocUnsafe: a data key must not share Node's slab with other buffers.
  const bytes = Buffer.alloc(size);
  pool.copy(bytes, 0, next, next + size);
  pool.fill(0, next, next + size);
  next += size;
  return bytes;
}
