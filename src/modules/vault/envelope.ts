import { decrypt, encrypt, KEY_BYTES } from './crypto/aes-gcm';
import type { MasterKey, VaultKeyring } from './keyring';
import { randomBytesFromPool } from './crypto/random-pool';

/**
 * Envelope encryption with AES-256-GCM: each record has its own random data key, which encrypts the
 * record (node:crypto, aes-gcm.ts); the data key is stored wrapped (encrypted) by a master key, whose
 * id is stored beside it. The master key does its wrapping itself (MasterKey.wrap): in this process
 * for `env` keys, inside the token for `pkcs11` ones. Both layers authenticate an "additional
 * authenticated data" string that names the record and its merchant account, so a ciphertext copied
 * onto another row, or another merchant's row, fails to decrypt instead of yielding someone else's card.
 */
export interface SealedRecord {
  ciphertext: Buffer;
  wrappedKey: Buffer;
  masterKeyId: string;
}

/** Decryption failed: wrong record, tampered bytes, or a missing master key. Never carries plaintext. */
export class VaultDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VaultDecryptionError';
  }
}

function wrapAad(masterKeyId: string, aad: string): string {
  return `wrap\n${masterKeyId}\n${aad}`;
}

export function seal(plaintext: Buffer, aad: string, master: MasterKey): SealedRecord {
  const dataKey = randomBytesFromPool(KEY_BYTES);
  try {
    return {
      ciphertext: encrypt(dataKey, plaintext, aad),
      wrappedKey: master.wrap(dataKey, wrapAad(master.id, aad)),
      masterKeyId: master.id,
    };
  } finally {
    dataKey.fill(0);
  }
}

function unwrap(
  record: Pick<SealedRecord, 'wrappedKey' | 'masterKeyId'>,
  aad: string,
  keyring: VaultKeyring,
  what: string,
): Buffer {
  const master = keyring.get(record.masterKeyId);
  if (!master) {
    throw new VaultDecryptionError(
      `${what}: wrapped by master key "${record.masterKeyId}", which ${keyring.source} does not hold`,
    );
  }
  const dataKey = master.unwrap(record.wrappedKey, wrapAad(master.id, aad));
  if (!dataKey)
    throw new VaultDecryptionError(
      `${what}: the data key does not authenticate for this record (moved, tampered or wrong master key)`,
    );
  return dataKey;
}

/**
 * Runs `use` with the record's data key, unwrapped for this one use and zeroed afterwards whatever `use`
 * does: an unwrapped data key lives no longer than one operation.
 */
function withDataKey<T>(
  record: Pick<SealedRecord, 'wrappedKey' | 'masterKeyId'>,
  aad: string,
  keyring: VaultKeyring,
  what: string,
  use: (dataKey: Buffer) => T,
): T {
  const dataKey = unwrap(record, aad, keyring, what);
  try {
    return use(dataKey);
  } finally {
    dataKey.fill(0);
  }
}

/** @param what names the record in error messages (an id, never content). */
export function open(record: SealedRecord, aad: string, keyring: VaultKeyring, what: string): Buffer {
  return withDataKey(record, aad, keyring, what, (dataKey) => {
    const plaintext = decrypt(dataKey, record.ciphertext, aad);
    if (!plaintext)
      throw new VaultDecryptionError(
        `${what}: the ciphertext does not authenticate for this record (moved or tampered)`,
      );
    return plaintext;
  });
}

/** Re-wraps the data key under `to`; the record's ciphertext is untouched. */
export function rewrap(
  record: Pick<SealedRecord, 'wrappedKey' | 'masterKeyId'>,
  aad: string,
  keyring: VaultKeyring,
  to: MasterKey,
  what: string,
): Buffer {
  return withDataKey(record, aad, keyring, what, (dataKey) => to.wrap(dataKey, wrapAad(to.id, aad)));
}

/** A bare secret (not a record) wrapped directly under a master key, e.g. a merchant's fingerprint key. */
export function wrapSecret(secret: Buffer, aad: string, master: MasterKey): Buffer {
  return master.wrap(secret, wrapAad(master.id, aad));
}

export function unwrapSecret(
  wrapped: Buffer,
  masterKeyId: string,
  aad: string,
  keyring: VaultKeyring,
  what: string,
): Buffer {
  return unwrap({ wrappedKey: wrapped, masterKeyId }, aad, keyring, what);
}

/**
 * Several secrets of one record under one data key, each bound to its own part name as well as the
 * record's AAD: one part can be erased (its column nulled) without touching the others, and a part
 * moved into another part's column fails to open. Rotation re-wraps the one data key only.
 */
export interface SealedParts {
  /** By part name; null for a part not given. */
  parts: Record<string, Buffer | null>;
  wrappedKey: Buffer;
  masterKeyId: string;
}

function partAad(aad: string, part: string): string {
  return `${aad}\npart\n${part}`;
}

export function sealParts(plaintexts: Record<string, Buffer | null>, aad: string, master: MasterKey): SealedParts {
  const dataKey = randomBytesFromPool(KEY_BYTES);
  try {
    const parts: Record<string, Buffer | null> = {};
    for (const [name, plaintext] of Object.entries(plaintexts))
      parts[name] = plaintext ? encrypt(dataKey, plaintext, partAad(aad, name)) : null;
    return { parts, wrappedKey: master.wrap(dataKey, wrapAad(master.id, aad)), masterKeyId: master.id };
  } finally {
    dataKey.fill(0);
  }
}

/** One more part sealed under an existing sealParts record's data key (opened, used, zeroed). */
export function sealPart(
  record: Pick<SealedRecord, 'wrappedKey' | 'masterKeyId'>,
  part: string,
  plaintext: Buffer,
  aad: string,
  keyring: VaultKeyring,
  what: string,
): Buffer {
  return withDataKey(record, aad, keyring, what, (dataKey) => encrypt(dataKey, plaintext, partAad(aad, part)));
}

/** One part of a sealParts record; the caller zeroes the plaintext when done. */
export function openPart(
  record: Pick<SealedRecord, 'wrappedKey' | 'masterKeyId'>,
  part: string,
  ciphertext: Buffer,
  aad: string,
  keyring: VaultKeyring,
  what: string,
): Buffer {
  return withDataKey(record, aad, keyring, what, (dataKey) => {
    const plaintext = decrypt(dataKey, ciphertext, partAad(aad, part));
    if (!plaintext)
      throw new VaultDecryptionError(`${what}: the ${part} does not authenticate for this record (moved or tampered)`);
    return plaintext;
  });
}
