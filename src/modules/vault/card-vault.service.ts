import { createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { open, seal, SealedRecord, unwrapSecret, wrapSecret } from './envelope';
import { VAULT_KEYRING, VaultKeyring } from './keyring';
import { boundAad } from './secret-sealer';
import { MerchantKeysRepository } from './merchant-keys.repository';
import { openOr503 } from './vault.errors';

export interface CardSecrets {
  number: string;
  cardholderName: string | null;
}

/** Names a card record in the additional authenticated data of both encryption layers. */
export function cardAad(merchantAccountId: string, id: string): string {
  return boundAad('payment-method', merchantAccountId, id);
}

const fingerprintKeyAad = (merchantAccountId: string) => boundAad('fingerprint-key', merchantAccountId);

/** Unwrapped fingerprint keys stay in memory briefly; a rotation never changes them. */
const FINGERPRINT_KEY_TTL_MS = 5 * 60_000;

/**
 * The only place card secrets are encrypted or decrypted. Plaintext exists in memory only, for the
 * duration of a call, and never leaves through a log line, an error or an API response.
 */
@Injectable()
export class CardVault {
  private readonly fingerprintKeys = new LRUCache<string, Buffer>({ max: 10_000, ttl: FINGERPRINT_KEY_TTL_MS });

  constructor(
    @Inject(VAULT_KEYRING) private readonly keyring: VaultKeyring,
    private readonly merchantKeys: MerchantKeysRepository,
  ) {}

  seal(merchantAccountId: string, id: string, secrets: CardSecrets): SealedRecord {
    const plaintext = Buffer.from(JSON.stringify({ n: secrets.number, h: secrets.cardholderName }), 'utf8');
    try {
      return seal(plaintext, cardAad(merchantAccountId, id), this.keyring.current);
    } finally {
      plaintext.fill(0);
    }
  }

  open(merchantAccountId: string, id: string, sealed: SealedRecord): CardSecrets {
    const what = `payment method ${id}`;
    const plaintext = openOr503(what, () => open(sealed, cardAad(merchantAccountId, id), this.keyring, what));
    try {
      const { n, h } = JSON.parse(plaintext.toString('utf8')) as { n: string; h: string | null };
      return { number: n, cardholderName: h };
    } finally {
      plaintext.fill(0);
    }
  }

  /**
   * HMAC-SHA256 of the number under the merchant's own fingerprint key: equal cards of one merchant
   * share a fingerprint, other merchants' fingerprints of the same card differ, and without the key
   * (wrapped by a master key) no one can test guesses of a number against it.
   */
  async fingerprint(merchantAccountId: string, number: string): Promise<string> {
    const key = await this.fingerprintKey(merchantAccountId);
    // A KeyObject, not the Buffer: Node.js 24 checks a Buffer key at ~25 µs a call (docs/decisions/0105).
    return createHmac('sha256', createSecretKey(key)).update(number).digest('base64url');
  }

  /** A value only compared (an Idempotency-Key) as a keyed hash; `purpose:` keeps it from any card's (0139). */
  keyedHash(merchantAccountId: string, purpose: 'idempotency-key', value: string): Promise<string> {
    return this.fingerprint(merchantAccountId, `${purpose}:${value}`);
  }

  private async fingerprintKey(merchantAccountId: string): Promise<Buffer> {
    const cached = this.fingerprintKeys.get(merchantAccountId);
    if (cached) return cached;
    const aad = fingerprintKeyAad(merchantAccountId);
    const candidate = randomBytes(32);
    const current = this.keyring.current;
    // First writer wins; everyone (every process) then reads the same row.
    await this.merchantKeys.insertIfAbsent(merchantAccountId, wrapSecret(candidate, aad, current), current.id);
    candidate.fill(0);
    const row = await this.merchantKeys.get(merchantAccountId);
    const what = `fingerprint key of ${merchantAccountId}`;
    const key = openOr503(what, () => unwrapSecret(row.wrapped_key, row.master_key_id, aad, this.keyring, what));
    this.fingerprintKeys.set(merchantAccountId, key);
    return key;
  }
}
