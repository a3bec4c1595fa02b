import { createCipheriv, createDecipheriv, createSecretKey, KeyObject } from 'node:crypto';
import { randomBytesFromPool } from './random-pool';

/**
 * AES-256-GCM in node:crypto, for data keys (each record's layer) and for `env` master keys.
 * Blob layout: version (1 byte, = 1) | IV (12) | tag (16) | ciphertext.
 */
const GCM_VERSION = 1;
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
export const KEY_BYTES = 32;

/**
 * A key as node:crypto takes it fastest. Node.js 24 spends ~11 µs per cipher telling a Buffer key from a
 * KeyObject or CryptoKey (its brand checks throw and catch for a Buffer), against ~1 µs to make a
 * KeyObject from the Buffer (docs/decisions/0105). The KeyObject copies the
 * key into native memory that is cleared when it is collected, as the cipher's own context does: it
 * lives no longer than the cipher made with it. Long-lived keys (a master key) pass their own KeyObject.
 */
function secretKey(key: Buffer | KeyObject): KeyObject {
  return key instanceof KeyObject ? key : createSecretKey(key);
}

export function encrypt(key: Buffer | KeyObject, plaintext: Buffer, aad: string): Buffer {
  const iv = randomBytesFromPool(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', secretKey(key), iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([GCM_VERSION]), iv, cipher.getAuthTag(), body]);
}

/** null when the blob does not authenticate (or is not a version-1 blob). */
export function decrypt(key: Buffer | KeyObject, blob: Buffer, aad: string): Buffer | null {
  if (blob.length < 1 + IV_BYTES + TAG_BYTES || blob[0] !== GCM_VERSION) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', secretKey(key), blob.subarray(1, 1 + IV_BYTES));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(blob.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES));
    // GCM is a stream mode: update() returns every byte and final() only checks the tag.
    const plaintext = decipher.update(blob.subarray(1 + IV_BYTES + TAG_BYTES));
    decipher.final();
    return plaintext;
  } catch {
    return null; // authentication failed
  }
}
