import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import type { SealedRecord } from '../../vault/envelope';
import type { AuthenticationKind } from '../authentication-kinds/kinds';
import { ForwardAuthentication } from './forward-authentication.entity';

export interface SealedRow {
  id: string;
  config_id: string;
  kind: AuthenticationKind;
  fields: Record<string, string>;
  ciphertext: Buffer;
  wrapped_key: Buffer;
  master_key_id: string;
  version: number;
}

/** A method's fields as stored: the public ones as they are, the secrets sealed. */
interface StoredFields {
  publicFields: Record<string, string>;
  warnings: unknown;
  secretDetails: unknown;
  sealed: SealedRecord;
}

/**
 * Every read and write of vault_forward_authentications: TypeORM for the routes, a prepared statement (Sql)
 * for the methods a forward reads.
 */
@Injectable()
export class ForwardAuthenticationsRepository {
  private readonly keyset: KeysetTable<ForwardAuthentication>;

  constructor(
    @InjectRepository(ForwardAuthentication) private readonly methods: Repository<ForwardAuthentication>,
    private readonly sql: Sql,
  ) {
    this.keyset = new KeysetTable(sql, methods.metadata, 'm');
  }

  async insert(
    method: { id: string; merchantAccountId: string; configId: string; kind: AuthenticationKind; label: string },
    stored: StoredFields,
    shape: 'ours' | 'gr4vy',
  ): Promise<void> {
    await this.methods.query(
      `INSERT INTO vault_forward_authentications
         (id, merchant_account_id, config_id, kind, label, fields, warnings, ciphertext, wrapped_key, master_key_id, shape,
          secret_details)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        method.id,
        method.merchantAccountId,
        method.configId,
        method.kind,
        method.label,
        JSON.stringify(stored.publicFields),
        JSON.stringify(stored.warnings),
        stored.sealed.ciphertext,
        stored.sealed.wrappedKey,
        stored.sealed.masterKeyId,
        shape,
        JSON.stringify(stored.secretDetails),
      ],
    );
  }

  find(merchantAccountId: string, configId: string, id: string): Promise<ForwardAuthentication | null> {
    return this.methods.findOneBy({ id, merchantAccountId, configId });
  }

  /** Whether the method was there. */
  async updateLabel(
    merchantAccountId: string,
    configId: string,
    id: string,
    label: string | undefined,
  ): Promise<boolean> {
    const [, affected] = await this.methods.query<[unknown, number]>(
      `UPDATE vault_forward_authentications SET label = $4, version = version + 1, updated_at = now()
          WHERE id = $1 AND merchant_account_id = $2 AND config_id = $3`,
      [id, merchantAccountId, configId, label],
    );
    return affected > 0;
  }

  /** A whole new fields set, and the label when given; whether the method was there. */
  async updateFields(
    merchantAccountId: string,
    configId: string,
    id: string,
    label: string | null,
    stored: StoredFields,
  ): Promise<boolean> {
    const [, affected] = await this.methods.query<[unknown, number]>(
      `UPDATE vault_forward_authentications
            SET label = COALESCE($4, label), fields = $5, warnings = $6, ciphertext = $7, wrapped_key = $8, master_key_id = $9,
                secret_details = $10, version = version + 1, updated_at = now()
          WHERE id = $1 AND merchant_account_id = $2 AND config_id = $3`,
      [
        id,
        merchantAccountId,
        configId,
        label,
        JSON.stringify(stored.publicFields),
        JSON.stringify(stored.warnings),
        stored.sealed.ciphertext,
        stored.sealed.wrappedKey,
        stored.sealed.masterKeyId,
        JSON.stringify(stored.secretDetails),
      ],
    );
    return affected > 0;
  }

  /** Whether the method was there. */
  async delete(merchantAccountId: string, configId: string, id: string): Promise<boolean> {
    const result = await this.methods.delete({ id, merchantAccountId, configId });
    return !!result.affected;
  }

  /** One page of a config's methods, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  page(merchantAccountId: string, configId: string, keyset: KeysetRequest): Promise<ForwardAuthentication[]> {
    return this.keyset.seekPage(
      [where('m.merchant_account_id = ? AND m.config_id = ?', merchantAccountId, configId)],
      keyset,
    );
  }

  /** The newest `max` methods of each config, in one query, newest first. */
  newestOf(merchantAccountId: string, configIds: readonly string[], max: number): Promise<ForwardAuthentication[]> {
    return this.methods
      .createQueryBuilder('m')
      .where(
        `m.id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY config_id ORDER BY created_at DESC, id DESC) AS n
                    FROM vault_forward_authentications
                   WHERE merchant_account_id = :merchantAccountId AND config_id = ANY(:configIds)) ranked
                 WHERE n <= :max)`,
        { merchantAccountId, configIds: [...configIds], max },
      )
      .orderBy('m.created_at', 'DESC')
      .addOrderBy('m.id', 'DESC')
      .getMany();
  }

  /** The sealed rows a forward opens; `ids` are UUIDs. */
  forForward(merchantAccountId: string, ids: string[]): Promise<SealedRow[]> {
    return this.sql.prepared<SealedRow & Record<string, unknown>>(
      'forward-authentications.for-forward',
      `SELECT id, config_id, kind, fields, ciphertext, wrapped_key, master_key_id, version FROM vault_forward_authentications
          WHERE merchant_account_id = $1 AND id = ANY($2::uuid[])`,
      [merchantAccountId, ids],
    );
  }
}
