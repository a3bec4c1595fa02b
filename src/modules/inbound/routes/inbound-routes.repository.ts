import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import type { SealedRecord } from '../../vault/envelope';
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
>;

/** Null leaves a column as it is; `secret` is the sealed secret of a new caller_authentication (null: none). */
interface RouteChanges {
  displayName: string | null;
  upstreamUrl: string | null;
  methods: string[] | null;
  pathPrefixes: string[] | null;
  maxBodyBytes: number | null;
  timeoutSeconds: number | null;
  fieldMappings: FieldMappings | null;
  caller: { settings: CallerSettings; secret: SealedRecord | null } | null;
}

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
  ciphertext: Buffer | null;
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

  async insert(route: NewRoute, secret: SealedRecord | null): Promise<void> {
    await this.routes.insert({
      ...route,
      ciphertext: secret?.ciphertext ?? null,
      wrappedKey: secret?.wrappedKey ?? null,
      masterKeyId: secret?.masterKeyId ?? null,
    });
  }

  find(merchantAccountId: string, id: string): Promise<InboundRoute | null> {
    return this.routes.findOneBy({ id, merchantAccountId });
  }

  /** The route a request names, of whichever merchant account, with its sealed secret. */
  async forEntry(id: string): Promise<EntryRouteRow | null> {
    const [row] = await this.sql.prepared<EntryRouteRow & Record<string, unknown>>(
      'inbound.route-for-entry',
      `SELECT id, merchant_account_id, upstream_url, methods, path_prefixes, caller_authentication, max_body_bytes,
              timeout_seconds, field_mappings, ciphertext, wrapped_key, master_key_id
         FROM inbound_routes WHERE id = $1`,
      [id],
    );
    return row ?? null;
  }

  /** Whether the route was there. */
  async update(merchantAccountId: string, id: string, changes: RouteChanges): Promise<boolean> {
    const caller = changes.caller;
    const [, affected] = await this.routes.query<[unknown, number]>(
      `UPDATE inbound_routes
          SET display_name = COALESCE($3, display_name), upstream_url = COALESCE($4, upstream_url),
              methods = COALESCE($5, methods), path_prefixes = COALESCE($6, path_prefixes),
              max_body_bytes = COALESCE($7, max_body_bytes), timeout_seconds = COALESCE($8, timeout_seconds),
              field_mappings = COALESCE($9::jsonb, field_mappings),
              caller_authentication = COALESCE($10::jsonb, caller_authentication),
              ciphertext = CASE WHEN $10::jsonb IS NULL THEN ciphertext ELSE $11 END,
              wrapped_key = CASE WHEN $10::jsonb IS NULL THEN wrapped_key ELSE $12 END,
              master_key_id = CASE WHEN $10::jsonb IS NULL THEN master_key_id ELSE $13 END,
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
        caller === null ? null : JSON.stringify(caller.settings),
        caller?.secret?.ciphertext ?? null,
        caller?.secret?.wrappedKey ?? null,
        caller?.secret?.masterKeyId ?? null,
      ],
    );
    return affected > 0;
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
