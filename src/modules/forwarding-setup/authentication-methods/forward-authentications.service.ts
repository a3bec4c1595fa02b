import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemException } from '../../../platform/problem/problem';
import { isUuid } from '../../../platform/http/uuid';
import type { KeysetRequest } from '../../../platform/pagination/keyset';
import { SharedCache, SharedCaches } from '../../../platform/redis/shared-cache';
import { VaultForwardConfigsService } from '../configs/vault-forward-configs.service';
import { AuthenticationDefinition, DEFINITION_KIND_OF, DefinitionKind, ourKindOf } from '../definitions/definition';
import { VaultForwardDefinitionsService } from '../definitions/vault-forward-definitions.service';
import { VaultDecryptionError } from '../../vault/envelope';
import { ourFields, readEntries } from '../definitions/definition-fields';
import { boundAad, SecretSealer } from '../../vault/secret-sealer';
import { ForwardAuthentication } from './forward-authentication.entity';
import { ForwardAuthenticationErrors, notFound, throwIfAny } from './forward-authentications.errors';
import { ForwardAuthenticationsRepository, SealedRow } from './forward-authentications.repository';
import { AuthenticationKind, KINDS } from '../authentication-kinds/kinds';
import { fieldErrors, secretDetails, secretWarnings, tokenUrlErrors } from '../authentication-kinds/method-fields';
import { privateKeyErrors } from '../authentication-kinds/private-keys';

/** What a forward needs of one method: every field as entered, secrets decrypted. Never log it. */
export interface UsableAuthenticationMethod {
  id: string;
  configId: string;
  kind: AuthenticationKind;
  /** Changes whenever the method is updated (a counter): key parsed material and connection pools by `${id}:${version}`. */
  version: string;
  /** Every field as entered, secrets decrypted. */
  fields: Readonly<Record<string, string>>;
}

/** Called with the id of a method that was updated or deleted in any process, or null for "all of them". */
type AuthenticationMethodListener = (methodId: string | null) => void;

export const AUTHENTICATIONS_HEADER = 'x-vault-forward-authentications';

/** The name of the SharedCache of sealed rows (also in SEALED_TABLES, so key rotation refreshes it). */
const SEALED_AUTHENTICATIONS_CACHE = 'sealed-forward-authentications';
/** Sealed rows: bounds staleness when a change notice is missed. */
const SEALED_TTL_MS = 60_000;
/** Decrypted fields: short, and dropped with the sealed row on every change notice. */
const OPENED_TTL_MS = 30_000;

/** The AAD of a method's sealed secrets: its merchant account, its config and its own id. */
function authenticationAad(merchantAccountId: string, configId: string, id: string): string {
  return boundAad('forward-authentication', merchantAccountId, configId, id);
}

interface DefinitionMethodInput {
  kind: DefinitionKind;
  displayName: string;
  fields: unknown;
}

interface MethodInput {
  kind: AuthenticationKind;
  label: string;
  fields: Record<string, unknown>;
}

function headerProblem(
  definition: typeof ForwardAuthenticationErrors.notUsable,
  id: string,
  message: string,
): ProblemException {
  return new ProblemException(definition, `Authentication method ${id} ${message}.`, [
    { location: 'header', name: AUTHENTICATIONS_HEADER, message: `${id} ${message}` },
  ]);
}

/**
 * Authentication methods: the CRUD behind /vault-forward/configs/{config_id}/authentications, and
 * forForward, which the forwarding service (and the queued worker) call to turn the ids of
 * x-vault-forward-authentications into usable methods.
 *
 * Change notification (for connection pools keyed by a method's identity): `onMethodChanged(listener)`
 * registers a callback that runs in every process whenever a method is updated or deleted anywhere
 * (through the SharedCache notice), with the method id, or null when every method may have changed
 * (key rotation, Redis reconnect). It returns a function that unregisters the callback.
 */
@Injectable()
export class ForwardAuthenticationsService {
  private readonly logger = new Logger('ForwardAuthentications');
  private readonly sealed: SharedCache<SealedRow>;
  /** Opened fields by `${merchant}:${id}`; follows `sealed` (onDrop), and is checked against the row's version. */
  private readonly opened = new LRUCache<string, { version: number; fields: Readonly<Record<string, string>> }>({
    max: 10_000,
    ttl: OPENED_TTL_MS,
  });
  private readonly listeners = new Set<AuthenticationMethodListener>();

  constructor(
    private readonly methods: ForwardAuthenticationsRepository,
    private readonly configs: VaultForwardConfigsService,
    private readonly definitions: VaultForwardDefinitionsService,
    private readonly sealer: SecretSealer,
    caches: SharedCaches,
    @Inject(APP_CONFIG) private readonly appConfig: AppConfig,
  ) {
    this.sealed = caches.create<SealedRow>(SEALED_AUTHENTICATIONS_CACHE, {
      max: 10_000,
      ttlMs: SEALED_TTL_MS,
      onDrop: (key) => this.dropped(key),
    });
  }

  onMethodChanged(listener: AuthenticationMethodListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async create(merchantAccountId: string, configId: string, input: MethodInput): Promise<ForwardAuthentication> {
    await this.configs.get(merchantAccountId, configId);
    const fields = this.validFields(input.kind, input.fields);
    return this.insert(merchantAccountId, configId, input.kind, input.label, fields, 'ours');
  }

  /**
   * Gr4vy's create: `kind` mle|mtls|signature and `fields: [{key, value}]`, read against the config's
   * definition (its authentication of that kind), stored as the method of our kind it maps onto.
   */
  async createFromDefinition(
    merchantAccountId: string,
    configId: string,
    input: DefinitionMethodInput,
  ): Promise<ForwardAuthentication> {
    const { auth, definitionId } = await this.authenticationDefinition(merchantAccountId, configId, input.kind);
    const kind = ourKindOf(auth);
    const read = readEntries(input.fields, auth, definitionId);
    const built = ourFields(auth, kind, read.entries);
    throwIfAny(kind, [...read.errors, ...(read.errors.length > 0 ? [] : built.errors)]);
    return this.insert(merchantAccountId, configId, kind, input.displayName, built.fields, 'gr4vy');
  }

  /** The config's definition and its authentication of `kind`; 400 naming `kind` when it has none. */
  async authenticationDefinition(
    merchantAccountId: string,
    configId: string,
    kind: DefinitionKind,
  ): Promise<{ auth: AuthenticationDefinition; definitionId: string }> {
    const config = await this.configs.get(merchantAccountId, configId);
    const definition = await this.definitions.get(merchantAccountId, config.definitionId);
    const auth = definition.authentications.find((a) => a.kind === kind);
    if (!auth) {
      const offered = definition.authentications.map((a) => a.kind).join(', ');
      throw new ProblemException(
        CommonErrors.validationFailed,
        `Definition "${definition.id}" of this config takes ${offered} authentication, not ${kind}.`,
        [{ location: 'body', name: 'kind', message: `must be one of ${offered}` }],
      );
    }
    return { auth, definitionId: definition.id };
  }

  /** The definitions of a config's methods, by our kind (what Gr4vy-shaped answers are rendered with). */
  async definitionsByKind(
    merchantAccountId: string,
    configId: string,
  ): Promise<Map<AuthenticationKind, AuthenticationDefinition>> {
    const config = await this.configs.get(merchantAccountId, configId);
    const definition = await this.definitions.get(merchantAccountId, config.definitionId);
    return new Map(definition.authentications.map((a) => [ourKindOf(a), a]));
  }

  private async insert(
    merchantAccountId: string,
    configId: string,
    kind: AuthenticationKind,
    label: string,
    fields: Record<string, string>,
    shape: 'ours' | 'gr4vy',
  ): Promise<ForwardAuthentication> {
    const id = randomUUID();
    const stored = await this.seal(merchantAccountId, configId, id, kind, fields);
    await this.methods.insert({ id, merchantAccountId, configId, kind, label }, stored, shape);
    return this.get(merchantAccountId, configId, id);
  }

  /**
   * Gr4vy's update: a new display name and/or some fields, merged with the stored ones (secrets
   * included: opened, changed, sealed again); `""` unsets an optional field.
   */
  async updateFromDefinition(
    merchantAccountId: string,
    configId: string,
    id: string,
    changes: { displayName?: string; fields?: unknown },
  ): Promise<ForwardAuthentication> {
    if (changes.fields === undefined)
      return this.update(merchantAccountId, configId, id, { label: changes.displayName });
    const existing = await this.get(merchantAccountId, configId, id);
    const definitionKind = DEFINITION_KIND_OF[existing.kind];
    if (!definitionKind) throw noGr4vyForm(existing.kind);
    const { auth, definitionId } = await this.authenticationDefinition(merchantAccountId, configId, definitionKind);
    if (ourKindOf(auth) !== existing.kind) throw noGr4vyForm(existing.kind);
    const row = (await this.sealedRows(merchantAccountId, [existing.id])).get(existing.id);
    if (!row) throw notFound(id);
    const read = readEntries(changes.fields, auth, definitionId);
    const built = ourFields(auth, existing.kind, read.entries, this.open(merchantAccountId, row));
    throwIfAny(existing.kind, [...read.errors, ...(read.errors.length > 0 ? [] : built.errors)]);
    return this.update(merchantAccountId, configId, id, { label: changes.displayName, fields: built.fields });
  }

  /** One page of the config's methods (404 for an unknown config), as `KeysetTable.seekPage` fetches it. */
  async list(merchantAccountId: string, configId: string, keyset: KeysetRequest): Promise<ForwardAuthentication[]> {
    await this.configs.get(merchantAccountId, configId);
    return this.methods.page(merchantAccountId, configId, keyset);
  }

  async get(merchantAccountId: string, configId: string, id: string): Promise<ForwardAuthentication> {
    await this.configs.get(merchantAccountId, configId);
    const found = isUuid(id) ? await this.methods.find(merchantAccountId, configId, id) : null;
    if (!found) throw notFound(id);
    return found;
  }

  /** A new label and/or a whole new fields set (never merged with the stored secrets). */
  async update(
    merchantAccountId: string,
    configId: string,
    id: string,
    changes: { label?: string; fields?: Record<string, unknown> },
  ): Promise<ForwardAuthentication> {
    if (changes.label === undefined && changes.fields === undefined) {
      throw new ProblemException(CommonErrors.validationFailed, 'Send a new label, a new fields set, or both.', [
        { location: 'body', name: 'fields', message: 'label or fields is required' },
      ]);
    }
    const existing = await this.get(merchantAccountId, configId, id);
    let updated: boolean;
    if (changes.fields === undefined) {
      updated = await this.methods.updateLabel(merchantAccountId, configId, id, changes.label);
    } else {
      const fields = this.validFields(existing.kind, changes.fields);
      const stored = await this.seal(merchantAccountId, configId, id, existing.kind, fields);
      updated = await this.methods.updateFields(merchantAccountId, configId, id, changes.label ?? null, stored);
    }
    if (!updated) throw notFound(id);
    await this.sealed.invalidate(`${merchantAccountId}:${id}`);
    return this.get(merchantAccountId, configId, id);
  }

  async delete(merchantAccountId: string, configId: string, id: string): Promise<void> {
    await this.configs.get(merchantAccountId, configId);
    const deleted = isUuid(id) && (await this.methods.delete(merchantAccountId, configId, id));
    if (!deleted) throw notFound(id);
    await this.sealed.invalidate(`${merchantAccountId}:${id}`);
  }

  /**
   * The methods of a forward, in the order given. Every id must be a method of this merchant account
   * and of `configId` (the config that enables the target); the same id twice or two mutual-tls
   * methods are refused. Problems name the header and the id, never a field value. At most one query
   * (none when every row is cached); decryption only for methods not opened in the last 30 s.
   */
  async forForward(
    merchantAccountId: string,
    configId: string,
    ids: readonly string[],
  ): Promise<UsableAuthenticationMethod[]> {
    if (ids.length === 0) return [];
    const seen = new Set<string>();
    for (const raw of ids) {
      const id = raw.toLowerCase();
      if (seen.has(id))
        throw headerProblem(ForwardAuthenticationErrors.conflict, id, 'is listed twice; list each method once');
      seen.add(id);
    }
    const rows = await this.sealedRows(merchantAccountId, [...seen]);
    let mutualTls: string | null = null;
    const usable: UsableAuthenticationMethod[] = [];
    for (const id of seen) {
      const row = rows.get(id);
      if (!row)
        throw headerProblem(
          ForwardAuthenticationErrors.notUsable,
          id,
          'is not an authentication method of this merchant account',
        );
      if (row.config_id !== configId) {
        throw headerProblem(
          ForwardAuthenticationErrors.notUsable,
          id,
          `belongs to another forwarding config than ${configId}, which enables this target`,
        );
      }
      if (row.kind === 'mutual-tls') {
        if (mutualTls)
          throw headerProblem(
            ForwardAuthenticationErrors.conflict,
            id,
            `is a second mutual-tls method (after ${mutualTls}); a connection has one client certificate`,
          );
        mutualTls = id;
      }
      usable.push({
        id,
        configId: row.config_id,
        kind: row.kind,
        version: String(row.version),
        fields: this.open(merchantAccountId, row),
      });
    }
    return usable;
  }

  private open(merchantAccountId: string, row: SealedRow): Readonly<Record<string, string>> {
    const key = `${merchantAccountId}:${row.id}`;
    const cached = this.opened.get(key);
    if (cached && cached.version === row.version) return cached.fields;
    let secrets: Record<string, string>;
    try {
      secrets = this.sealer.openJson<Record<string, string>>(
        authenticationAad(merchantAccountId, row.config_id, row.id),
        { ciphertext: row.ciphertext, wrappedKey: row.wrapped_key, masterKeyId: row.master_key_id },
        `authentication method ${row.id}`,
      );
    } catch (error) {
      if (!(error instanceof VaultDecryptionError)) throw error;
      this.logger.error(error.message);
      throw headerProblem(ForwardAuthenticationErrors.unreadable, row.id, 'could not be decrypted');
    }
    const fields = Object.freeze({ ...row.fields, ...secrets });
    this.opened.set(key, { version: row.version, fields });
    return fields;
  }

  private sealedRows(merchantAccountId: string, ids: string[]): Promise<Map<string, SealedRow>> {
    return this.sealed.readThrough(
      ids,
      (id) => `${merchantAccountId}:${id}`,
      async (missing) => {
        // An id that is no UUID cannot be in the table (and would fail the cast): reported as unknown.
        const uuids = missing.filter(isUuid);
        if (uuids.length === 0) return [];
        const rows = await this.methods.forForward(merchantAccountId, uuids);
        return rows.map((row) => [row.id, row] as const);
      },
    );
  }

  private dropped(key: string | null): void {
    const methodId = key === null ? null : key.slice(key.lastIndexOf(':') + 1);
    if (key === null) this.opened.clear();
    else this.opened.delete(key);
    for (const listener of this.listeners) {
      try {
        listener(methodId);
      } catch (error) {
        this.logger.error(`a method-change listener failed: ${(error as Error).message}`);
      }
    }
  }

  private validFields(kind: AuthenticationKind, fields: Record<string, unknown>): Record<string, string> {
    throwIfAny(kind, fieldErrors(kind, fields));
    return fields as Record<string, string>;
  }

  private async seal(
    merchantAccountId: string,
    configId: string,
    id: string,
    kind: AuthenticationKind,
    fields: Record<string, string>,
  ) {
    // A token endpoint, asked with the method's credentials, is called as a target: the outbound policy, a host of the config.
    if (kind === 'oauth2-client-credentials') {
      const { hosts } = await this.configs.get(merchantAccountId, configId);
      throwIfAny(kind, tokenUrlErrors(fields, hosts, this.appConfig.forwardInsecureHosts));
    }
    // Keys out of bounds or not a working pair (decision 0144); checked off the event loop.
    throwIfAny(kind, await privateKeyErrors(kind, fields));
    const publicFields: Record<string, string> = {};
    const secrets: Record<string, string> = {};
    for (const field of KINDS[kind].fields) {
      const value = fields[field.name];
      if (value === undefined) continue;
      (field.secret ? secrets : publicFields)[field.name] = value;
    }
    return {
      publicFields,
      warnings: secretWarnings(kind, fields),
      secretDetails: await secretDetails(kind, fields),
      sealed: this.sealer.sealJson(authenticationAad(merchantAccountId, configId, id), secrets),
    };
  }
}

/** A method with no Gr4vy form (ours only, or no longer its definition's kind) takes our shape of update only. */
function noGr4vyForm(kind: AuthenticationKind): ProblemException {
  const error = { location: 'body' as const, name: 'fields', message: `${kind} takes a fields object` };
  const detail = `A ${kind} method has no Gr4vy form here; send label or a fields object.`;
  return new ProblemException(CommonErrors.validationFailed, detail, [error]);
}
