import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { cardAad, fingerprintKeyAad } from './card-vault.service';
import { rewrap, unwrapSecret, VaultDecryptionError, wrapSecret } from './envelope';
import { VAULT_KEYRING, VaultKeyring } from './keyring';
import { PaymentMethodResolver } from './payment-method-resolver.service';

export interface RotationResult {
  master_key_id: string;
  rewrapped_payment_methods: number;
  rewrapped_merchant_keys: number;
  /** Rows whose key could not be unwrapped (tampered, or wrapped by a key no longer configured). */
  failed_payment_methods: string[];
  failed_merchant_keys: string[];
  /**
   * Rows still wrapped by another key after the run: the failed ones, plus any another transaction
   * held locked (skipped) or inserted meanwhile by a process that still had the old key first.
   * Zero means the old key may be removed.
   */
  remaining: number;
}

interface Batch {
  done: number;
  failed: string[];
  last: string | null;
}

/**
 * Re-wraps every data key (and merchant fingerprint key) that an older master key wrapped, under the
 * current one. Walks the rows in id order in small transactions of `batchSize`, locking with
 * FOR UPDATE SKIP LOCKED, so the API keeps serving (both keys stay in VAULT_MASTER_KEYS meanwhile),
 * several rotators may run at once, and an interrupted run simply continues when started again.
 * A row that cannot be unwrapped is reported by id and skipped, never allowed to stall the rest.
 * Ciphertexts are not touched: only the small wrapped keys change.
 */
@Injectable()
export class KeyRotationService {
  private readonly logger = new Logger('KeyRotation');

  constructor(
    @Inject(VAULT_KEYRING) private readonly keyring: VaultKeyring,
    @InjectDataSource() private readonly db: DataSource,
    private readonly resolver: PaymentMethodResolver,
  ) {}

  async rotate(batchSize = 500): Promise<RotationResult> {
    const paymentMethods = await this.walk(
      batchSize,
      '00000000-0000-0000-0000-000000000000',
      (tx, after) => this.rewrapPaymentMethods(tx, after, batchSize),
      'payment method keys',
    );
    const merchantKeys = await this.walk(batchSize, '', (tx, after) => this.rewrapMerchantKeys(tx, after, batchSize), 'merchant fingerprint keys');
    // API processes hold sealed rows with the old wrapping; have them read the new one before the
    // operator retires the old key.
    await this.resolver.forgetAll();
    const [{ remaining }] = (await this.db.query(
      `SELECT (SELECT count(*) FROM payment_methods WHERE master_key_id <> $1)
            + (SELECT count(*) FROM vault_merchant_keys WHERE master_key_id <> $1) AS remaining`,
      [this.keyring.current.id],
    )) as Array<{ remaining: string }>;
    return {
      master_key_id: this.keyring.current.id,
      remaining: Number(remaining),
      rewrapped_payment_methods: paymentMethods.done,
      rewrapped_merchant_keys: merchantKeys.done,
      failed_payment_methods: paymentMethods.failed,
      failed_merchant_keys: merchantKeys.failed,
    };
  }

  private async walk(
    batchSize: number,
    /** Below the smallest key: the walk is keyset-paged by primary key. */
    start: string,
    batch: (tx: EntityManager, after: string) => Promise<Batch & { seen: number }>,
    what: string,
  ): Promise<{ done: number; failed: string[] }> {
    let after = start;
    let done = 0;
    const failed: string[] = [];
    for (;;) {
      const result = await this.db.transaction((tx) => batch(tx, after));
      done += result.done;
      failed.push(...result.failed);
      if (result.done > 0) this.logger.log(`re-wrapped ${done} ${what} so far`);
      if (result.seen < batchSize || result.last === null) break;
      after = result.last;
    }
    return { done, failed };
  }

  private async rewrapPaymentMethods(tx: EntityManager, after: string, batchSize: number): Promise<Batch & { seen: number }> {
    const current = this.keyring.current;
    const rows = (await tx.query(
      `SELECT id, merchant_account_id, ciphertext, wrapped_key, master_key_id FROM payment_methods
        WHERE master_key_id <> $1 AND id > $2::uuid ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [current.id, after, batchSize],
    )) as Array<{ id: string; merchant_account_id: string; ciphertext: Buffer; wrapped_key: Buffer; master_key_id: string }>;
    const failed: string[] = [];
    let done = 0;
    for (const row of rows) {
      let wrapped: Buffer;
      try {
        wrapped = rewrap(
          { ciphertext: row.ciphertext, wrappedKey: row.wrapped_key, masterKeyId: row.master_key_id },
          cardAad(row.merchant_account_id, row.id),
          this.keyring,
          current,
          `payment method ${row.id}`,
        );
      } catch (error) {
        if (!(error instanceof VaultDecryptionError)) throw error;
        this.logger.error(error.message);
        failed.push(row.id);
        continue;
      }
      await tx.query('UPDATE payment_methods SET wrapped_key = $2, master_key_id = $3 WHERE id = $1', [row.id, wrapped, current.id]);
      done++;
    }
    return { done, failed, seen: rows.length, last: rows.length ? rows[rows.length - 1].id : null };
  }

  private async rewrapMerchantKeys(tx: EntityManager, after: string, batchSize: number): Promise<Batch & { seen: number }> {
    const current = this.keyring.current;
    const rows = (await tx.query(
      `SELECT merchant_account_id, wrapped_key, master_key_id FROM vault_merchant_keys
        WHERE master_key_id <> $1 AND merchant_account_id > $2 ORDER BY merchant_account_id LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [current.id, after, batchSize],
    )) as Array<{ merchant_account_id: string; wrapped_key: Buffer; master_key_id: string }>;
    const failed: string[] = [];
    let done = 0;
    for (const row of rows) {
      const aad = fingerprintKeyAad(row.merchant_account_id);
      let secret: Buffer;
      try {
        secret = unwrapSecret(row.wrapped_key, row.master_key_id, aad, this.keyring, `fingerprint key of ${row.merchant_account_id}`);
      } catch (error) {
        if (!(error instanceof VaultDecryptionError)) throw error;
        this.logger.error(error.message);
        failed.push(row.merchant_account_id);
        continue;
      }
      try {
        await tx.query('UPDATE vault_merchant_keys SET wrapped_key = $2, master_key_id = $3 WHERE merchant_account_id = $1', [
          row.merchant_account_id,
          wrapSecret(secret, aad, current),
          current.id,
        ]);
        done++;
      } finally {
        secret.fill(0);
      }
    }
    return { done, failed, seen: rows.length, last: rows.length ? rows[rows.length - 1].merchant_account_id : null };
  }
}
