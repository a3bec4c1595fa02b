import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { SealedTable } from './sealed-tables';

type SealedRow = Record<string, string> & { wrapped_key: Buffer; master_key_id: string };

/**
 * Key rotation's reads and writes of the sealed tables: one statement shape for every table of SEALED_TABLES,
 * which touches only the wrapping columns (wrapped_key, master_key_id) the vault gave those tables. The one
 * repository that writes tables other than its own, because rotation is the vault's across them all.
 */
@Injectable()
export class SealedRowsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Rows of `tables` wrapped by a master key other than `currentKeyId`. */
  async remaining(tables: readonly SealedTable[], currentKeyId: string): Promise<number> {
    const counts = tables.map((t) => `(SELECT count(*) FROM ${t.table} WHERE master_key_id <> $1)`).join(' + ');
    const [{ remaining }] = await this.db.query<Array<{ remaining: string }>>(`SELECT ${counts} AS remaining`, [
      currentKeyId,
    ]);
    return Number(remaining);
  }

  /**
   * In one transaction: up to `batchSize` rows after `after` not wrapped by `currentKeyId`, locked (FOR UPDATE
   * SKIP LOCKED); each gets the wrapping `rewrap` returns for it (none when it returns null). Resolves to the
   * rows seen and the key of the last.
   */
  rewrapBatch(
    table: SealedTable,
    after: string,
    batchSize: number,
    currentKeyId: string,
    rewrap: (row: SealedRow) => Buffer | null,
  ): Promise<{ seen: number; last: string | null }> {
    return this.db.transaction(async (tx) => {
      const columns = [...new Set([table.key, ...table.aadColumns])].map((c) => `${c}::text AS ${c}`).join(', ');
      // Identifiers come from SEALED_TABLES, never from input.
      const rows = await tx.query<SealedRow[]>(
        `SELECT ${columns}, wrapped_key, master_key_id FROM ${table.table}
        WHERE master_key_id <> $1 AND ${table.key} > $2::${table.keyType} ORDER BY ${table.key} LIMIT $3 FOR UPDATE SKIP LOCKED`,
        [currentKeyId, after, batchSize],
      );
      for (const row of rows) {
        const wrapped = rewrap(row);
        if (wrapped === null) continue;
        await tx.query(
          `UPDATE ${table.table} SET wrapped_key = $2, master_key_id = $3 WHERE ${table.key} = $1::${table.keyType}`,
          [row[table.key], wrapped, currentKeyId],
        );
      }
      return { seen: rows.length, last: rows.length ? rows[rows.length - 1][table.key] : null };
    });
  }
}
