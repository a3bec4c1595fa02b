import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { isUuid } from '../../../platform/http/uuid';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemException } from '../../../platform/problem/problem';
import { refusalOf, transportOf } from '../../forwarding-setup/targets/transport';
import { RECORD_BODIES_DEFAULT_DAYS } from '../../forwarding-setup/configs/vault-forward-configs.service';
import { boundAad, SecretSealer } from '../../vault/secret-sealer';
import { CallerAuthenticationInput, CallerSettings, splitCallerAuthentication } from './caller-authentication';
import {
  CreateInboundRouteDto,
  DEFAULT_BODY_BYTES,
  DEFAULT_TIMEOUT_SECONDS,
  UpdateInboundRouteDto,
} from './dto/inbound-route.dto';
import { InboundRoute } from './inbound-route.entity';
import { InboundRouteErrors } from './inbound-routes.errors';
import { EntryRouteRow, InboundRoutesRepository, SealedRouteColumns } from './inbound-routes.repository';
import { normalisedUpstreamHeaders, UpstreamHeader } from './upstream-headers';

/** Binds a route's sealed caller secret to its merchant and id (SEALED_TABLES: inbound_routes). */
function inboundRouteAad(merchantAccountId: string, id: string): string {
  return boundAad('inbound-route-secret', merchantAccountId, id);
}

/** The upstream headers' part of a route's sealed record, beside the caller secret (decision 0158). */
const HEADERS_PART = 'upstream-headers';
const NOTHING_SEALED: SealedRouteColumns = {
  ciphertext: null,
  upstreamHeaders: null,
  wrappedKey: null,
  masterKeyId: null,
};

/** A checked caller_authentication: its settings in the clear, its secret (null for the kinds without one). */
interface CallerInput {
  settings: CallerSettings;
  secret: string | null;
}

/** The inbound routes of a merchant account: their rules, and the opening of a caller secret for the entry. */
@Injectable()
export class InboundRoutesService {
  constructor(
    private readonly routes: InboundRoutesRepository,
    private readonly sealer: SecretSealer,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(merchantAccountId: string, input: CreateInboundRouteDto): Promise<InboundRoute> {
    const id = randomUUID();
    const upstreamUrl = this.upstreamUrl(input.upstream_url);
    const caller = this.callerInput(input.caller_authentication);
    const headers = normalisedUpstreamHeaders(input.upstream_headers ?? []);
    await this.routes.insert(
      {
        id,
        merchantAccountId,
        displayName: input.display_name,
        upstreamUrl,
        methods: input.methods ?? ['POST'],
        pathPrefixes: input.path_prefixes ?? ['/'],
        callerAuthentication: caller.settings,
        maxBodyBytes: input.max_body_bytes ?? DEFAULT_BODY_BYTES,
        timeoutSeconds: input.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS,
        fieldMappings: input.field_mappings ?? {},
        upstreamHeaderNames: headers.map((header) => header.name),
        recordBodies: input.record_bodies ?? false,
        recordBodiesRetentionDays: input.record_bodies_retention_days ?? RECORD_BODIES_DEFAULT_DAYS,
      },
      this.sealedWith(merchantAccountId, id, caller.secret, headers),
    );
    return this.get(merchantAccountId, id);
  }

  async get(merchantAccountId: string, id: string): Promise<InboundRoute> {
    const found = isUuid(id) ? await this.routes.find(merchantAccountId, id.toLowerCase()) : null;
    if (!found) throw notFound(id);
    return found;
  }

  /**
   * Only the fields sent change. A new caller_authentication or upstream_headers seals the route's secrets again
   * under a fresh data key, the one not sent opened from the row as it is (locked) and sealed with it.
   */
  async update(merchantAccountId: string, id: string, input: UpdateInboundRouteDto): Promise<InboundRoute> {
    const route = await this.get(merchantAccountId, id);
    const caller = input.caller_authentication === undefined ? null : this.callerInput(input.caller_authentication);
    const headers = input.upstream_headers === undefined ? null : normalisedUpstreamHeaders(input.upstream_headers);
    const reseal =
      caller === null && headers === null
        ? null
        : (current: SealedRouteColumns) => {
            const secret = caller !== null ? caller.secret : this.openedSecret(merchantAccountId, route.id, current);
            return this.sealedWith(
              merchantAccountId,
              route.id,
              secret,
              headers ?? this.openedHeaders(merchantAccountId, route.id, current),
            );
          };
    const changed = await this.routes.update(
      merchantAccountId,
      route.id,
      {
        displayName: input.display_name ?? null,
        upstreamUrl: input.upstream_url === undefined ? null : this.upstreamUrl(input.upstream_url),
        methods: input.methods ?? null,
        pathPrefixes: input.path_prefixes ?? null,
        maxBodyBytes: input.max_body_bytes ?? null,
        timeoutSeconds: input.timeout_seconds ?? null,
        fieldMappings: input.field_mappings ?? null,
        callerAuthentication: caller?.settings ?? null,
        upstreamHeaderNames: headers?.map((header) => header.name) ?? null,
        recordBodies: input.record_bodies ?? null,
        recordBodiesRetentionDays: input.record_bodies_retention_days ?? null,
      },
      reseal,
    );
    if (!changed) throw notFound(id);
    return this.get(merchantAccountId, route.id);
  }

  async delete(merchantAccountId: string, id: string): Promise<void> {
    const deleted = isUuid(id) && (await this.routes.delete(merchantAccountId, id.toLowerCase()));
    if (!deleted) throw notFound(id);
  }

  list(merchantAccountId: string, keyset: KeysetRequest): Promise<InboundRoute[]> {
    return this.routes.page(merchantAccountId, keyset);
  }

  /** The route a request to /vault-inbound/{id} names, or 404 (of any merchant account: the id is the address). */
  async forEntry(id: string): Promise<EntryRouteRow> {
    const row = isUuid(id) ? await this.routes.forEntry(id.toLowerCase()) : null;
    if (!row)
      throw new ProblemException(InboundRouteErrors.notFound, `No inbound route "${id.slice(0, 64)}" exists.`, [
        { location: 'path', name: 'route_id', message: 'no such inbound route' },
      ]);
    return row;
  }

  /** The caller secret of a route of kind shared-secret or hmac; the caller zeroes it once used. */
  secretOf(route: EntryRouteRow): Buffer {
    if (!route.ciphertext || !route.wrapped_key || !route.master_key_id)
      throw new Error(`inbound route ${route.id} has no sealed secret`); // a bug: every such kind seals one
    return this.sealer.open(
      inboundRouteAad(route.merchant_account_id, route.id),
      { ciphertext: route.ciphertext, wrappedKey: route.wrapped_key, masterKeyId: route.master_key_id },
      `inbound route ${route.id}`,
    );
  }

  /** The headers the route sets on the requests to its upstream, opened. */
  upstreamHeadersOf(route: EntryRouteRow): UpstreamHeader[] {
    return this.openedHeaders(route.merchant_account_id, route.id, {
      ciphertext: route.ciphertext,
      upstreamHeaders: route.upstream_headers,
      wrappedKey: route.wrapped_key,
      masterKeyId: route.master_key_id,
    });
  }

  /**
   * A route's secrets sealed under one fresh data key: the caller secret whole (as secretOf opens it), the
   * upstream headers as a part beside it, or as the only part of their own record when there is no secret.
   */
  private sealedWith(
    merchantAccountId: string,
    id: string,
    secret: string | null,
    headers: readonly UpstreamHeader[],
  ): SealedRouteColumns {
    const aad = inboundRouteAad(merchantAccountId, id);
    const secretBytes = secret === null ? null : Buffer.from(secret, 'utf8');
    const headerBytes = headers.length === 0 ? null : Buffer.from(JSON.stringify(headers), 'utf8');
    try {
      if (secretBytes !== null) {
        const record = this.sealer.seal(aad, secretBytes);
        const part = headerBytes && this.sealer.sealPart(aad, record, HEADERS_PART, headerBytes, `inbound route ${id}`);
        return { ...record, upstreamHeaders: part };
      }
      if (headerBytes === null) return NOTHING_SEALED;
      const sealed = this.sealer.sealParts(aad, { [HEADERS_PART]: headerBytes });
      return {
        ciphertext: null,
        upstreamHeaders: sealed.parts[HEADERS_PART],
        wrappedKey: sealed.wrappedKey,
        masterKeyId: sealed.masterKeyId,
      };
    } finally {
      secretBytes?.fill(0);
      headerBytes?.fill(0);
    }
  }

  private openedSecret(merchantAccountId: string, id: string, sealed: SealedRouteColumns): string | null {
    if (!sealed.ciphertext || !sealed.wrappedKey || !sealed.masterKeyId) return null;
    const bytes = this.sealer.open(
      inboundRouteAad(merchantAccountId, id),
      { ciphertext: sealed.ciphertext, wrappedKey: sealed.wrappedKey, masterKeyId: sealed.masterKeyId },
      `inbound route ${id}`,
    );
    try {
      return bytes.toString('utf8');
    } finally {
      bytes.fill(0);
    }
  }

  private openedHeaders(merchantAccountId: string, id: string, sealed: SealedRouteColumns): UpstreamHeader[] {
    if (!sealed.upstreamHeaders || !sealed.wrappedKey || !sealed.masterKeyId) return [];
    const bytes = this.sealer.openPart(
      inboundRouteAad(merchantAccountId, id),
      { wrappedKey: sealed.wrappedKey, masterKeyId: sealed.masterKeyId },
      HEADERS_PART,
      sealed.upstreamHeaders,
      `upstream headers of inbound route ${id}`,
    );
    try {
      return JSON.parse(bytes.toString('utf8')) as UpstreamHeader[];
    } finally {
      bytes.fill(0);
    }
  }

  /**
   * The upstream as given, when the outbound policy allows it (https, or http on a FORWARD_INSECURE_HOSTS host; an
   * IP literal public): asked again when a request is sent on, since FORWARD_INSECURE_HOSTS may change.
   */
  private upstreamUrl(value: string): string {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw invalid('upstream_url', 'must be an absolute URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('upstream_url', 'must be an https URL');
    if (url.username || url.password || url.search || url.hash || value.includes('?') || value.includes('#'))
      throw invalid('upstream_url', 'must have no credentials, query or fragment');
    const refusal = refusalOf(transportOf(this.config.forwardInsecureHosts, url));
    if (refusal !== null) throw invalid('upstream_url', `is ${refusal}`);
    return value;
  }

  private callerInput(input: CallerAuthenticationInput): CallerInput {
    const { settings, secret } = splitCallerAuthentication(input);
    if (settings.kind === 'mutual-tls' && this.config.inboundClientCertHeader === null)
      throw new ProblemException(
        InboundRouteErrors.mutualTlsUnavailable,
        'Callers cannot authenticate with mutual-tls here: the API’s TLS terminator passes on no client certificate.',
        [{ location: 'body', name: 'caller_authentication.kind', message: 'mutual-tls is not available' }],
      );
    return { settings, secret };
  }
}

function invalid(name: string, message: string): ProblemException {
  return new ProblemException(CommonErrors.validationFailed, `${name} ${message}.`, [
    { location: 'body', name, message },
  ]);
}

function notFound(id: string): ProblemException {
  return new ProblemException(
    InboundRouteErrors.notFound,
    `No inbound route "${id.slice(0, 64)}" exists in this merchant account.`,
  );
}
