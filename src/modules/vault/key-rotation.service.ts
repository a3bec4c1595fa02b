import { Inject, Injectable, Logger } from '@nestjs/common';
import { Metrics } from '../../platform/metrics/metrics.service';
import { SharedCaches } from '../../platform/redis/shared-cache';
import { rewrap, unwrapSecret, VaultDecryptionError, wrapSecret } from './envelope';
import { VAULT_KEYRING, VaultKeyring } from './keyring';
import { SEALED_TABLES, SealedTable } from './sealed-tables';
import { SealedRowsRepository } from './sealed-rows.repository';
import { boundAad } from './secret-sealer';

/**
 * `rewrapped_<table>` and `failed_<table>` for every entry of SEALED_TABLES (payment_methods,
 * merchant_keys, authentication_methods), plus:
 */
interface RotationResult {
  master_key_id: string;
  /**
   * Rows still wrapped by another key after the run: the failed ones, plus any another transaction
   * held locked (skipped) or inserted meanwhile by a process that still had the old key first.
   * Zero means the old key may be removed.
   */
  remaining: number;
  /** Rows re-wrapped by this run, and ids of rows whose key could not be unwrapped (tampered, or wrapped by a key no longer configured). */
  [perTable: `rewrapped_${string}` | `failed_${string}`]: number | string[];
}

interface Batch {
  done: number;
  failed: string[];
  seen: number;
  last: string | null;
}

/**
 * Re-wraps every data key (and bare wrapped secret) that an older master key wrapped, under the
 * current one, in every table of SEALED_TABLES. Walks each table's rows in key order in small
 * transactions of `batchSize`, locking with FOR UPDATE SKIP LOCKED, so the API keeps serving (both
 * keys stay in VAULT_MASTER_KEYS meanwhile), several rotators may run at once, and an interrupted run
 * simply continues when started again. A row that cannot be unwrapped is reported by id and skipped,
 * never allowed to stall the rest. Ciphertexts are not touched: only the small wrapped keys change.
 */
@Injectable()
export class KeyRotationService {
  private readonly logger = new Logger('KeyRotation');

  constructor(
    @Inject(VAULT_KEYRING) private readonly keyring: VaultKeyring,
    private readonly rows: SealedRowsRepository,
    private readonly caches: SharedCaches,
    private readonly metrics: Metrics,
  ) {}

  async rotate(batchSize = 500, tables: readonly SealedTable[] = SEALED_TABLES): Promise<RotationResult> {
    const rewrapped: Record<string, number> = {};
    const failed: Record<string, string[]> = {};
    for (const table of tables) {
      const result = await this.walk(table, batchSize);
      rewrapped[`rewrapped_${table.name}`] = result.done;
      failed[`failed_${table.name}`] = result.failed;
    }
    // Processes hold sealed rows with the old wrapping; have them read the new one before the
    // operator retires the old key.
    for (const table of tables) if (table.cache) await this.caches.invalidate(table.cache, null);
    const remaining = await this.rows.remaining(tables, this.keyring.current.id);
    const result = { master_key_id: this.keyring.current.id, ...rewrapped, ...failed, remaining };
    // The rotation's audit line: what moved under which key (ids of failed rows are in their own error lines).
    this.logger.log({
      msg: 'master key rotation finished',
      master_key_id: result.master_key_id,
      rewrapped,
      failed: Object.fromEntries(Object.entries(failed).map(([name, ids]) => [name, ids.length])),
      remaining: result.remaining,
    });
    return result;
  }

  private async walk(table: SealedTable, batchSize: number): Promise<{ done: number; failed: string[] }> {
    // Below the smallest key: the walk is keyset-paged by primary key.
    let after = table.keyType === 'uuid' ? '00000000-0000-0000-0000-000000000000' : '';
    let done = 0;
    const failed: string[] = [];
    for (;;) {
      const result = await this.rewrapBatch(table, after, batchSize);
      done += result.done;
      failed.push(...result.failed);
      if (result.done > 0) {
        this.metrics.rowsRewrapped(table.name, result.done);
        this.logger.log(
          `re-wrapped ${done} rows of ${table.table} under master key "${this.keyring.current.id}" so far`,
        );
      }
      if (result.seen < batchSize || result.last === null) break;
      after = result.last;
    }
    return { done, failed };
  }

  private async rewrapBatch(table: SealedTable, after: string, batchSize: number): Promise<Batch> {
    const current = this.keyring.current;
    const failed: string[] = [];
    let done = 0;
    const { seen, last } = await this.rows.rewrapBatch(table, after, batchSize, current.id, (row) => {
      const id = row[table.key];
      const aad = boundAad(table.purpose, ...table.aadColumns.map((c) => row[c]));
      const what = `${table.describe} ${id}`;
      let wrapped: Buffer;
      try {
        if (table.layout === 'record') {
          wrapped = rewrap(
            { wrappedKey: row.wrapped_key, masterKeyId: row.master_key_id },
            aad,
            this.keyring,
            current,
            what,
          );
        } else {
          const secret = unwrapSecret(row.wrapped_key, row.master_key_id, aad, this.keyring, what);
          try {
            wrapped = wrapSecret(secret, aad, current);
          } finally {
            secret.fill(0);
          }
        }
      } catch (error) {
        if (!(error instanceof VaultDecryptionError)) throw error;
        this.logger.error(error.message);
        failed.push(id);
        return null;
      }
      done++;
      return wrapped;
    });
    return { done, failed, seen, last };
  }
}
