import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemException } from '../../../platform/problem/problem';
import { addressKind, literalAddress } from '../targets/addresses';
import { DEFAULT_CONFIG_METHODS, hostKey } from '../targets/http-methods';
import { transportOf } from '../targets/transport';
import { SharedCache, SharedCaches } from '../../../platform/redis/shared-cache';
import { StatementBatcher } from '../../../platform/database/statement-batcher';
import { isUniqueViolation } from '../../../platform/problem/database-errors';
import { VaultForwardConfig } from './vault-forward-config.entity';
import { VaultForwardConfigErrors } from './vault-forward-configs.errors';
import { EnabledConfigRow, VaultForwardConfigsRepository } from './vault-forward-configs.repository';
import { isUuid } from '../../../platform/http/uuid';
import {
  checkResponseRules,
  CompiledRule,
  compileResponseRules,
  ResponseRuleInput,
  UnmatchedPanAction,
} from './response-rules';

/** Bounds staleness when a change notice is missed (no Redis, or a dropped subscription). */
const CACHE_TTL_MS = 10_000;

/** Fresh reads per statement at most; a worker runs WORKER_CONCURRENCY attempts at once. */
const MAX_FRESH_BATCH = 200;

/** What the forwarding hot path needs to know about one enabled config. */
export interface EnabledConfig {
  id: string;
  hosts: ReadonlySet<string>;
  methods: ReadonlySet<string>;
  /** Empty, with unmatchedPan 'pass', when the answer goes back as it came. */
  responseRules: CompiledRule[];
  unmatchedPan: UnmatchedPanAction;
  /**
   * Days the record of a forward through it keeps the redacted request and answer (decision 0138): the config's
   * `record_bodies_retention_days` capped by FORWARD_RECORD_BODY_RETENTION_DAYS; 0 when no body is recorded.
   */
  recordBodiesDays: number;
}

/** Days a config's records keep their bodies: 1–30 (decision 0138). */
export const RECORD_BODIES_MAX_DAYS = 30;
export const RECORD_BODIES_DEFAULT_DAYS = 7;

interface ConfigChanges {
  displayName?: string;
  hosts?: string[];
  methods?: string[];
  enabled?: boolean;
  /** Unchecked (a request body's); checked here. */
  responseRules?: unknown;
  unmatchedPan?: UnmatchedPanAction;
  recordBodies?: boolean;
  recordBodiesRetentionDays?: number;
}

@Injectable()
export class VaultForwardConfigsService {
  /** Per merchant; every API process drops its copy as soon as one of them changes a config. */
  private readonly enabledCache: SharedCache<EnabledConfig[]>;

  constructor(
    private readonly configs: VaultForwardConfigsRepository,
    @Inject(APP_CONFIG) private readonly appConfig: AppConfig,
    caches: SharedCaches,
  ) {
    this.enabledCache = caches.create('forwarding-configs', { max: 10_000, ttlMs: CACHE_TTL_MS });
  }

  /**
   * Fresh reads, group-committed like the forward records (StatementBatcher): a read asked for while
   * one is in flight joins the next statement, which starts after it was asked for, so it is as fresh
   * as a read of its own. A queued attempt reads its merchant's configs on every send: one statement
   * per attempt would be half of a worker's statements (docs/decisions/0105).
   */
  private readonly freshReads = new StatementBatcher<string, EnabledConfig[]>({
    many: async (merchants) => {
      const rows = await this.configs.enabledOfMany([...new Set(merchants)]);
      const byMerchant = new Map<string, EnabledConfigRow[]>();
      for (const row of rows) {
        const list = byMerchant.get(row.merchant_account_id);
        if (list) list.push(row);
        else byMerchant.set(row.merchant_account_id, [row]);
      }
      // One compiled list per merchant, shared by its callers as a cached one is.
      const compiled = new Map<string, EnabledConfig[]>();
      return merchants.map((merchant) => {
        let configs = compiled.get(merchant);
        if (!configs) compiled.set(merchant, (configs = (byMerchant.get(merchant) ?? []).map(this.enabledConfig)));
        return configs;
      });
    },
    one: (merchant) => this.readEnabled(merchant),
    maxBatch: MAX_FRESH_BATCH,
  });

  private async readEnabled(merchantAccountId: string): Promise<EnabledConfig[]> {
    const rows = await this.configs.enabledOf(merchantAccountId);
    return rows.map(this.enabledConfig);
  }

  /** A row as the hot path reads it; the bodies' days capped by the operator's ceiling (0 there: none recorded). */
  private readonly enabledConfig = (r: EnabledConfigRow): EnabledConfig => ({
    id: r.id,
    hosts: new Set(r.hosts),
    methods: new Set(r.methods),
    responseRules: compileResponseRules(r.response_rules),
    unmatchedPan: r.unmatched_pan,
    recordBodiesDays: r.record_bodies
      ? Math.min(r.record_bodies_retention_days, this.appConfig.forwardRecordBodyRetentionDays)
      : 0,
  });

  /**
   * A config of a definition (its hosts are the definition's), or, without `definitionId`, one with its
   * own hosts and a generated custom definition. One config per definition and merchant account: 409.
   */
  async create(
    merchantAccountId: string,
    input: { definitionId?: string; displayName: string; hosts: string[] } & Omit<
      ConfigChanges,
      'displayName' | 'hosts'
    >,
  ): Promise<VaultForwardConfig> {
    const responseRules: ResponseRuleInput[] =
      input.responseRules === undefined ? [] : checkResponseRules(input.responseRules);
    const id = randomUUID();
    const definitionId = input.definitionId ?? `custom-${id}`;
    try {
      await this.configs.insert({
        id,
        merchantAccountId,
        definitionId,
        displayName: input.displayName,
        hosts: this.normaliseHosts(input.hosts),
        methods: input.methods ?? DEFAULT_CONFIG_METHODS,
        enabled: input.enabled ?? true,
        responseRules,
        unmatchedPan: input.unmatchedPan ?? 'pass',
        recordBodies: input.recordBodies ?? false,
        recordBodiesRetentionDays: input.recordBodiesRetentionDays ?? RECORD_BODIES_DEFAULT_DAYS,
      });
    } catch (error) {
      if (!isUniqueViolation(error, 'vault_forward_configs_definition_key')) throw error;
      throw new ProblemException(
        VaultForwardConfigErrors.duplicate,
        `This merchant account has a config for definition "${definitionId}" already; update that one.`,
        [{ location: 'body', name: 'definition_id', message: 'a config for this definition exists' }],
      );
    }
    await this.changed(merchantAccountId);
    return this.get(merchantAccountId, id);
  }

  /** How many configs, across merchant accounts, use a definition. */
  countByDefinition(definitionId: string): Promise<number> {
    return this.configs.countByDefinition(definitionId);
  }

  /** A definition's hosts changed: every config of it follows, in every merchant account. */
  async replaceDefinitionHosts(definitionId: string, hosts: string[]): Promise<void> {
    await this.configs.setDefinitionHosts(definitionId, this.normaliseHosts(hosts));
    await this.enabledCache.invalidateAll();
  }

  find(merchantAccountId: string, id: string): Promise<VaultForwardConfig | null> {
    return isUuid(id) ? this.configs.find(merchantAccountId, id) : Promise.resolve(null);
  }

  async get(merchantAccountId: string, id: string): Promise<VaultForwardConfig> {
    const found = isUuid(id) ? await this.configs.find(merchantAccountId, id) : null;
    if (!found) throw notFound(id);
    return found;
  }

  async update(merchantAccountId: string, id: string, changes: ConfigChanges): Promise<VaultForwardConfig> {
    if (!isUuid(id)) throw notFound(id);
    if (changes.hosts !== undefined) {
      const existing = await this.get(merchantAccountId, id);
      if (!existing.definitionId.startsWith('custom-')) {
        throw new ProblemException(
          CommonErrors.validationFailed,
          `This config takes the hosts of definition "${existing.definitionId}"; only a config made with hosts of its own changes them.`,
          [{ location: 'body', name: 'hosts', message: 'the definition’s hosts apply' }],
        );
      }
    }
    const hosts = changes.hosts === undefined ? null : this.normaliseHosts(changes.hosts);
    const rules =
      changes.responseRules === undefined ? null : JSON.stringify(checkResponseRules(changes.responseRules));
    const updated = await this.configs.update(merchantAccountId, id, {
      displayName: changes.displayName ?? null,
      hosts,
      methods: changes.methods ?? null,
      enabled: changes.enabled ?? null,
      responseRules: rules,
      unmatchedPan: changes.unmatchedPan ?? null,
      recordBodies: changes.recordBodies ?? null,
      recordBodiesRetentionDays: changes.recordBodiesRetentionDays ?? null,
    });
    if (!updated) throw notFound(id);
    await this.changed(merchantAccountId);
    return this.get(merchantAccountId, id);
  }

  async delete(merchantAccountId: string, id: string): Promise<void> {
    const deleted = isUuid(id) && (await this.configs.delete(merchantAccountId, id));
    if (!deleted) throw notFound(id);
    await this.changed(merchantAccountId);
  }

  /**
   * Hot path: the merchant's enabled configs, cached, with one plain query on a miss. `fresh` reads
   * the table whatever the cache holds (a queued attempt about to send: a change notice may have
   * been lost, or this worker may have no Redis at all, and the TTL is no bound on what a job sends).
   */
  async enabledConfigs(merchantAccountId: string, options: { fresh?: boolean } = {}): Promise<EnabledConfig[]> {
    const cached = options.fresh ? undefined : this.enabledCache.get(merchantAccountId);
    if (cached) return cached;
    const snapshot = this.enabledCache.snapshot();
    const configs = options.fresh
      ? await this.freshReads.run(merchantAccountId)
      : await this.readEnabled(merchantAccountId);
    this.enabledCache.set(merchantAccountId, configs, snapshot);
    return configs;
  }

  private changed(merchantAccountId: string): Promise<void> {
    return this.enabledCache.invalidate(merchantAccountId);
  }

  /**
   * Lower-case, `:443` dropped (the default), duplicates removed. What the outbound policy refuses (an
   * http origin, an IP literal outside public unicast space, unless the operator lists the host in
   * FORWARD_INSECURE_HOSTS) is refused at once: forwarding there would be refused anyway. So are other
   * spellings of an IPv4 address (`0x7f000001`, `2130706433`, `127.1`, `0177.0.0.1`): a target URL's host is always read in the
   * dotted form, so such an entry could never match, and a non-public one would slip past this check.
   */
  private normaliseHosts(hosts: string[]): string[] {
    const normalised = [...new Set(hosts.map(normaliseEntry))];
    normalised.forEach((listed, index) => {
      // An origin is checked by its host[:port], as the transport rules read the target.
      const entry = listed.includes('://') ? hostKey(new URL(listed)) : listed;
      const bare = entry.replace(/:\d+$/, '');
      const canonical = canonicalHostname(bare);
      const canonicalEntry = canonical + entry.slice(bare.length);
      const transport = hostTransport(
        this.appConfig.forwardInsecureHosts,
        listed.startsWith('http://') ? 'http' : 'https',
        canonicalEntry,
      );
      const field = `hosts[${index}]`;
      if (transport?.refused === 'insecure') {
        throw new ProblemException(
          CommonErrors.validationFailed,
          `${field} is an http origin; targets must use https unless the operator lists the host in FORWARD_INSECURE_HOSTS.`,
          [{ location: 'body', name: field, message: 'must be an https origin' }],
        );
      }
      if (transport?.refused === 'address') {
        const what =
          canonical === bare
            ? `${field} is ${addressKind(transport.reason)}`
            : `${field} "${entry}" is ${canonical}, ${addressKind(transport.reason)}`;
        throw new ProblemException(
          CommonErrors.validationFailed,
          `${what}, which is never forwarded to unless the operator lists it in FORWARD_INSECURE_HOSTS (for development and tests).`,
          [{ location: 'body', name: field, message: `${transport.reason} addresses are not allowed` }],
        );
      }
      if (canonical !== bare && literalAddress(canonical)) {
        throw new ProblemException(
          CommonErrors.validationFailed,
          `${field} "${entry}" is another spelling of ${canonical}; target URLs are matched in that form, so write "${canonicalEntry}".`,
          [{ location: 'body', name: field, message: `write the address as ${canonicalEntry}` }],
        );
      }
    });
    return normalised;
  }
}

/** An origin as the URL parser writes it (default port dropped), or a host entry lower-cased without `:443`. */
function normaliseEntry(entry: string): string {
  if (entry.includes('://')) return new URL(entry).origin;
  return entry.toLowerCase().replace(/:443$/, '');
}

/**
 * What the outbound policy says of a host entry reached by `scheme` (its targets' URLs); null for an entry
 * that is not a URL's host at all (the DTO refuses those).
 */
function hostTransport(insecureHosts: ReadonlySet<string>, scheme: 'http' | 'https', entry: string) {
  try {
    return transportOf(insecureHosts, new URL(`${scheme}://${entry}/`));
  } catch {
    return null;
  }
}

/** The host as a URL parser reads it (WHATWG: `127.1` and `0x7f000001` are 127.0.0.1); unchanged when it does not parse. */
function canonicalHostname(host: string): string {
  try {
    return new URL(`https://${host}/`).hostname;
  } catch {
    return host;
  }
}

function notFound(id: string): ProblemException {
  return new ProblemException(
    VaultForwardConfigErrors.notFound,
    `No forwarding config "${id.slice(0, 64)}" exists in this merchant account.`,
  );
}
