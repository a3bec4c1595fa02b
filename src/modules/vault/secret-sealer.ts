import { Inject, Injectable } from '@nestjs/common';
import { open, openPart, seal, SealedParts, SealedRecord, sealPart, sealParts, VaultDecryptionError } from './envelope';
import { VAULT_KEYRING, VaultKeyring } from './keyring';

/**
 * The additional authenticated data that binds a sealed secret to its place: what it is (`purpose`)
 * and the ids that own it, e.g. `forward-authentication\nv1\n<merchant>\n<config>\n<id>`. A blob copied
 * onto another row, another config or another merchant then fails to open. Every sealed table builds
 * its AAD here (the rotation registry rebuilds it from the row's columns, see sealed-tables.ts).
 */
export function boundAad(purpose: string, ...owners: readonly string[]): string {
  for (const part of [purpose, ...owners]) {
    // A newline inside a part would let two different bindings print the same string.
    if (part.includes('\n')) throw new Error('an AAD part cannot contain a newline');
  }
  return [purpose, 'v1', ...owners].join('\n');
}

/**
 * A SealedRecord as text, its bytes in base64: the form for what carries only text (a spool line, a
 * statement's text parameters that PostgreSQL decodes into the bytea columns).
 */
export interface SealedText {
  ciphertext: string;
  wrappedKey: string;
  masterKeyId: string;
}

/** The one-string form (a Redis value): `{"k": master key id, "w": wrapped key, "c": ciphertext}`, base64. */
interface SealedString {
  k: string;
  w: string;
  c: string;
}

/**
 * Seals and opens any secret under the vault's envelope (a fresh data key per record, wrapped by the
 * current master key), bound to an AAD from boundAad. The caller stores the three parts of the
 * SealedRecord in the columns `ciphertext`, `wrapped_key` and `master_key_id` and lists its table in
 * SEALED_TABLES, so `vault rotate-keys` re-wraps it with no code of its own.
 */
@Injectable()
export class SecretSealer {
  constructor(@Inject(VAULT_KEYRING) private readonly keyring: VaultKeyring) {}

  seal(aad: string, plaintext: Buffer): SealedRecord {
    return seal(plaintext, aad, this.keyring.current);
  }

  /** @param what names the record in a VaultDecryptionError (an id, never content). */
  open(aad: string, sealed: SealedRecord, what: string): Buffer {
    return open(sealed, aad, this.keyring, what);
  }

  /** JSON in, sealed out; the intermediate plaintext buffer is zeroed. */
  sealJson(aad: string, value: unknown): SealedRecord {
    const plaintext = Buffer.from(JSON.stringify(value), 'utf8');
    try {
      return this.seal(aad, plaintext);
    } finally {
      plaintext.fill(0);
    }
  }

  openJson<T>(aad: string, sealed: SealedRecord, what: string): T {
    const plaintext = this.open(aad, sealed, what);
    try {
      return JSON.parse(plaintext.toString('utf8')) as T;
    } finally {
      plaintext.fill(0);
    }
  }

  /** sealJson as text parts: three base64 strings where a record's three columns go. */
  sealJsonText(aad: string, value: unknown): SealedText {
    const sealed = this.sealJson(aad, value);
    return {
      ciphertext: sealed.ciphertext.toString('base64'),
      wrappedKey: sealed.wrappedKey.toString('base64'),
      masterKeyId: sealed.masterKeyId,
    };
  }

  /** sealJson as one string, for a store that holds a single text value (Redis). */
  sealText(aad: string, value: unknown): string {
    const sealed = this.sealJsonText(aad, value);
    return JSON.stringify({ k: sealed.masterKeyId, w: sealed.wrappedKey, c: sealed.ciphertext } satisfies SealedString);
  }

  /** The value of a sealText string; throws on a string that is not one, as on one that does not open. */
  openText<T>(aad: string, text: string, what: string): T {
    const { k, w, c } = JSON.parse(text) as Partial<SealedString>;
    if (typeof k !== 'string' || typeof w !== 'string' || typeof c !== 'string')
      throw new VaultDecryptionError(`${what}: not a sealed value`);
    return this.openJson<T>(
      aad,
      { masterKeyId: k, wrappedKey: Buffer.from(w, 'base64'), ciphertext: Buffer.from(c, 'base64') },
      what,
    );
  }

  /** Several secrets under one data key, each erasable alone (envelope.sealParts). */
  sealParts(aad: string, plaintexts: Record<string, Buffer | null>): SealedParts {
    return sealParts(plaintexts, aad, this.keyring.current);
  }

  /** One more part under the data key of a sealParts record (envelope.sealPart). */
  sealPart(
    aad: string,
    record: Pick<SealedRecord, 'wrappedKey' | 'masterKeyId'>,
    part: string,
    plaintext: Buffer,
    what: string,
  ): Buffer {
    return sealPart(record, part, plaintext, aad, this.keyring, what);
  }

  openPart(
    aad: string,
    record: Pick<SealedRecord, 'wrappedKey' | 'masterKeyId'>,
    part: string,
    ciphertext: Buffer,
    what: string,
  ): Buffer {
    return openPart(record, part, ciphertext, aad, this.keyring, what);
  }
}
