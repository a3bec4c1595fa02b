import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import type { CallerSettings } from './caller-authentication';
import type { FieldMappings } from './field-mappings';
import { InboundRoute } from './inbound-route.entity';

type NewRoute = Pick<
  InboundRoute,
  | 'id'
  | 'merchantAccountId'
  | 'displayName'
  | 'upstreamUrl'
  | 'methods'
  | 'pathPrefixes'
  | 'callerAuthentication'
  | 'maxBodyBytes'
  | 'timeoutSeconds'
  | 'fieldMappings'
  | 'upstreamHeaderNames'
  | 'recordBodies'
  | 'recordBodiesRetentionDays'
>;

/**
 * A route's sealed columns (decision 0158): the caller secret (`ciphertext`, sealed whole) and the upstream
 * headers (`upstreamHeaders`, a part) under one data key; all null when the route has neither.
 */
export interface SealedRouteColumns {
  ciphertext: Buffer | null;
  upstreamHeaders: Buffer | null;
  wrappedKey: Buffer | null;
  masterKeyId: string | null;
}

/** Null leaves a column as it is. */
interface RouteChanges {
  displayName: string | null;
  upstreamUrl: string | null;
  methods: string[] | null;
  pathPrefixes: string[] | null;
  maxBodyBytes: number | null;
  timeoutSeconds: number | null;
  fieldMappings: FieldMappings | null;
  callerAuthentication: CallerSettings | null;
  upstreamHeaderNames: string[] | null;
  recordBodies: boolean | null;
  recordBodiesRetentionDays: number | null;
}

/** The route's sealed columns as they are now (locked), to the ones it gets; null leaves them. */
type Reseal = (current: SealedRouteColumns) => SealedRouteColumns;

/** What the entry reads of a route on every request: everything, the sealed secret included. */
export interface EntryRouteRow {
  id: string;
  merchant_account_id: string;
  upstream_url: string;
  methods: string[];
  path_prefixes: string[];
  caller_authentication: CallerSettings;
  max_body_bytes: number;
  timeout_seconds: number;
  field_mappings: FieldMappings;
  record_bodies: boolean;
  record_bodies_retention_days: number;
  ciphertext: Buffer | null;
  upstream_headers: Buffer | null;
  wrapped_key: Buffer | null;
  master_key_id: string | null;
}

/** Every read and write of inbound_routes: TypeORM for the routes, a prepared statement for the entry's read. */
@Injectable()
export class InboundRoutesRepository {
  private readonly keyset: KeysetTable<InboundRoute>;

  constructor(
    @InjectRepository(InboundRoute) private readonly routes: Repository<InboundRoute>,
    private readonly sql: Sql,
  ) {
    this.keyset = new KeysetTable(sql, routes.metadata, 'r');
  }

  async insert(route: NewRoute, sealed: SealedRouteColumns): Promise<void> {
    await this.routes.insert({ ...route, ...sealed });
  }

  find(merchantAccountId: string, id: string): Promise<InboundRoute | null> {
    return this.routes.findOneBy({ id, merchantAccountId });
  }

  /** The route a request names, of whichever merchant account, with its sealed secret. */
  async forEntry(id: string): Promise<EntryRouteRow | null> {
    const [row] = await this.sql.prepared<EntryRouteRow & Record<string, unknown>>(
      'inbound.route-for-entry',
      `SELECT id, merchant_account_id, upstream_url, methods, path_prefixes, caller_authentication, max_body_bytes,
              timeout_seconds, field_mappings, record_bodies, record_bodies_retention_days, ciphertext,
              upstream_headers, wrapped_key, master_key_id
         FROM inbound_routes WHERE id = $1`,
      [id],
    );
    return row ?? null;
  }

  /**
   * Whether the route was there. With `reseal`, in one transaction: the sealed columns read under a row lock and
   * replaced by what it makes of them, so two changes at once never leave a secret sealed under another's key.
   */
  update(merchantAccountId: string, id: string, changes: RouteChanges, reseal: Reseal | null): Promise<boolean> {
    return this.routes.manager.transaction(async (manager) => {
      let sealed: SealedRouteColumns | null = null;
      if (reseal !== null) {
        const [current] = await manager.query<Array<Record<string, unknown>>>(
          `SELECT ciphertext, upstream_headers, wrapped_key, master_key_id FROM inbound_routes
            WHERE id = $1 AND merchant_account_id = $2 FOR UPDATE`,
          [id, merchantAccountId],
        );
        if (current === undefined) return false;
        sealed = reseal({
          ciphertext: current.ciphertext as Buffer | null,
          upstreamHeaders: current.upstream_headers as Buffer | null,
          wrappedKey: current.wrapped_key as Buffer | null,
          masterKeyId: current.master_key_id as string | null,
        });
      }
      const [, affected] = await manager.query<[unknown, number]>(
        `UPDATE inbound_routes
            SET display_name = COALESCE($3, display_name), upstream_url = COALESCE($4, upstream_url),
                methods = COALESCE($5, methods), path_prefixes = COALESCE($6, path_prefixes),
                max_body_bytes = COALESCE($7, max_body_bytes), timeout_seconds = COALESCE($8, timeout_seconds),
                field_mappings = COALESCE($9::jsonb, field_mappings),
                caller_authentication = COALESCE($10::jsonb, caller_authentication),
                upstream_header_names = COALESCE($11, upstream_header_names),
                record_bodies = COALESCE($12, record_bodies),
                record_bodies_retention_days = COALESCE($13, record_bodies_retention_days),
                ciphertext = CASE WHEN $14 THEN $15 ELSE ciphertext END,
                upstream_headers = CASE WHEN $14 THEN $16 ELSE upstream_headers END,
                wrapped_key = CASE WHEN $14 THEN $17 ELSE wrapped_key END,
                master_key_id = CASE WHEN $14 THEN $18 ELSE master_key_id END,
                updated_at = now()
          WHERE id = $1 AND merchant_account_id = $2`,
        [
          id,
          merchantAccountId,
          changes.displayName,
          changes.upstreamUrl,
          changes.methods,
          changes.pathPrefixes,
          changes.maxBodyBytes,
          changes.timeoutSeconds,
          changes.fieldMappings === null ? null : JSON.stringify(changes.fieldMappings),
          changes.callerAuthentication === null ? null : JSON.stringify(changes.callerAuthentication),
          changes.upstreamHeaderNames,
          changes.recordBodies,
          changes.recordBodiesRetentionDays,
          sealed !== null,
          sealed?.ciphertext ?? null,
          sealed?.upstreamHeaders ?? null,
          sealed?.wrappedKey ?? null,
          sealed?.masterKeyId ?? null,
        ],
      );
      return affected > 0;
    });
  }

  /** Whether the route was there. */
  async delete(merchantAccountId: string, id: string): Promise<boolean> {
    const result = await this.routes.delete({ id, merchantAccountId });
    return !!result.affected;
  }

  /** One page, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  page(merchantAccountId: string, keyset: KeysetRequest): Promise<InboundRoute[]> {
    return this.keyset.seekPage([where('r.merchant_account_id = ?', merchantAccountId)], keyset);
  }
}
