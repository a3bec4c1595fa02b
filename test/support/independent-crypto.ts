import { constants, createDecipheriv, createHash, createHmac, KeyObject, privateDecrypt } from 'node:crypto';

/**
 * Checks of what the service sends, written straight on node:crypto (not our code, not jose), as a
 * downstream would implement them.
 */

/** Decrypts a compact JWE made with RSA-OAEP-256 + A256GCM; returns its header and plaintext. */
export function decryptRsaOaepA256Gcm(
  compact: string,
  privateKey: KeyObject,
): { header: Record<string, unknown>; plaintext: Buffer } {
  const parts = compact.split('.');
  if (parts.length !== 5) throw new Error(`not a compact JWE (${parts.length} parts)`);
  const [protectedB64, encryptedKey, iv, ciphertext, tag] = parts;
  const header = JSON.parse(Buffer.from(protectedB64, 'base64url').toString('utf8')) as Record<string, unknown>;
  if (header.alg !== 'RSA-OAEP-256' || header.enc !== 'A256GCM')
    throw new Error(`unexpected alg/enc ${String(header.alg)}/${String(header.enc)}`);
  const cek = privateDecrypt(
    { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
    Buffer.from(encryptedKey, 'base64url'),
  );
  const decipher = createDecipheriv('aes-256-gcm', cek, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(protectedB64, 'ascii'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  const plaintext = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
  return { header, plaintext };
}

/** HMAC over the given byte pieces, with the secret's UTF-8 bytes exactly as given. */
export function hmac(
  algorithm: 'sha256' | 'sha512',
  secret: string,
  pieces: Array<string | Buffer>,
  encoding: 'hex' | 'base64',
): string {
  const mac = createHmac(algorithm, Buffer.from(secret, 'utf8'));
  for (const piece of pieces) mac.update(typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece);
  return mac.digest(encoding);
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** AES-256-GCM as docs/vault.md lays a blob out: version 1 (1 byte) | IV (12) | tag (16) | ciphertext; null if it fails. */
function openGcmBlob(key: Buffer, blob: Buffer, aad: string): Buffer | null {
  if (blob[0] !== 1) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(1, 13));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(blob.subarray(13, 29));
    return Buffer.concat([decipher.update(blob.subarray(29)), decipher.final()]);
  } catch {
    return null;
  }
}

/**
 * Opens a record sealed in the vault's envelope as docs/vault.md describes it: the data key unwrapped by the
 * master key under `wrap\n<master key id>\n<aad>`, then the record under `aad`. null when either fails.
 */
export function openVaultEnvelope(
  master: { id: string; key: Buffer },
  sealed: { wrappedKey: Buffer; ciphertext: Buffer },
  aad: string,
): Buffer | null {
  const dataKey = openGcmBlob(master.key, sealed.wrappedKey, `wrap\n${master.id}\n${aad}`);
  return dataKey && openGcmBlob(dataKey, sealed.ciphertext, aad);
}
