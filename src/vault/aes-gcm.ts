import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM in node:crypto, for data keys (each record's layer) and for `env` master keys.
 * Blob layout: version (1 byte, = 1) | IV (12) | tag (16) | ciphertext.
 */
export const GCM_VERSION = 1;
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
export const KEY_BYTES = 32;

export function encrypt(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([GCM_VERSION]), iv, cipher.getAuthTag(), body]);
}

/** null when the blob does not authenticate (or is not a version-1 blob). */
export function decrypt(key: Buffer, blob: Buffer, aad: string): Buffer | null {
  if (blob.length < 1 + IV_BYTES + TAG_BYTES || blob[0] !== GCM_VERSION) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(1, 1 + IV_BYTES));
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
