import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { ProblemException } from '../../../platform/problem/problem';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { ResponseFilter } from '../../forwarding/answers/response-filter';
import { DownstreamClient, DownstreamResponse } from '../../forwarding/sending/downstream-client';
import { checkOutbound } from '../../forwarding/sending/outbound-policy';
import { HOP_BY_HOP } from '../../forwarding/sending/outbound-request';
import { OutboundErrors } from '../../forwarding/sending/outbound.errors';
import { NoWebhookSecretError, WebhookSigner } from '../../merchants/webhook-secrets/webhook-signer';
import { credentialHeader } from '../routes/caller-authentication';
import type { EntryRouteRow } from '../routes/inbound-routes.repository';
import { InboundRoutesService } from '../routes/inbound-routes.service';
import { InboundErrors } from './inbound.errors';
import { InboundTarget, upstreamUrlOf } from './inbound-target';

/** The sanitised request as it goes on: the caller's method and headers, the body with ids in place of card data. */
interface SanitisedRequest {
  method: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  contentType: string | undefined;
  /** The record's id: the upstream's x-vault-inbound-request-id and, as `msg_<hex>`, the webhook-id. */
  recordId: string;
}

/** Headers the upstream gets from us, never from the caller. */
const OURS = /^(webhook-[a-z-]+|x-vault-[a-z0-9-]*)$/;
/** What describes the bytes as they came, or the hop: the body goes on decoded, with its own length. */
const NOT_PASSED = new Set(['host', 'content-length', 'content-encoding', 'content-type', 'expect', ...HOP_BY_HOP]);

/**
 * Sends a sanitised inbound request to the route's upstream through the forward's one outbound client
 * (DownstreamClient: keep-alive pools, the address guard, the whole-request deadline) under the one outbound policy
 * (checkOutbound, FORWARD_INSECURE_HOSTS asked now), with the route's own upstream headers, signed with Standard
 * Webhooks under the merchant's webhook secret (WebhookSigner), and puts the answer through the masking every answer
 * gets (ResponseFilter, unmatched card numbers masked) before it goes back to the caller.
 */
/** Signs one message with the secrets read by signingFor. */
export type UpstreamSigning = Awaited<ReturnType<WebhookSigner['signerFor']>>;

@Injectable()
export class InboundSender {
  constructor(
    private readonly downstream: DownstreamClient,
    private readonly signer: WebhookSigner,
    private readonly answers: ResponseFilter,
    private readonly routes: InboundRoutesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * The merchant account's signing secrets, read once: asked before anything is stored (409 when it has none), and
   * signing the request afterwards.
   */
  async signingFor(merchantAccountId: string): Promise<UpstreamSigning> {
    try {
      return await this.signer.signerFor(merchantAccountId);
    } catch (error) {
      if (!(error instanceof NoWebhookSecretError)) throw error;
      throw new ProblemException(
        InboundErrors.upstreamUnsigned,
        'The route’s merchant account has no webhook signing secret to sign the request to its upstream with.',
      );
    }
  }

  /** `signing`: what signingFor gave before the cards were stored; read now when none was needed then. */
  async send(
    route: EntryRouteRow,
    target: InboundTarget,
    request: SanitisedRequest,
    signing?: UpstreamSigning,
  ): Promise<DownstreamResponse> {
    const url = upstreamUrlOf(route.upstream_url, target);
    const trusted = checkOutbound(this.config.forwardInsecureHosts, url, 'The inbound route’s upstream_url', {
      location: 'body',
      name: 'upstream_url',
    });
    const headers = this.passedHeaders(route, request.headers);
    // The route's own headers (decision 0158) over the caller's of the same name; never ours or the body's.
    for (const { name, value } of this.routes.upstreamHeadersOf(route)) headers[name] = value;
    if (request.contentType !== undefined) headers['content-type'] = request.contentType;
    const messageId = `msg_${request.recordId.replaceAll('-', '')}`;
    const sign = signing ?? (await this.signingFor(route.merchant_account_id));
    Object.assign(
      headers,
      sign({ id: messageId, timestamp: Math.floor(this.clock.epochMs() / 1000), body: request.body }),
      {
        'x-vault-inbound-route-id': route.id,
        'x-vault-inbound-request-id': request.recordId,
      },
    );
    const bodyless = request.method === 'GET' || request.method === 'HEAD';
    const response = await this.downstream
      .send({
        url,
        method: request.method,
        headers,
        body: bodyless && request.body.length === 0 ? undefined : request.body,
        timeoutMs: route.timeout_seconds * 1000,
        trusted,
        identity: null,
      })
      .catch((error: unknown) => {
        // The guard's refusal names the route's field, not the forward's header.
        if (!(error instanceof ProblemException) || error.definition !== OutboundErrors.targetAddressForbidden)
          throw error;
        throw new ProblemException(OutboundErrors.targetAddressForbidden, error.detail, [
          { location: 'body', name: 'upstream_url', message: 'resolves to an address that is not public' },
        ]);
      });
    return this.answers.filter(route.merchant_account_id, { responseRules: [], unmatchedPan: 'mask' }, response);
  }

  /**
   * The caller's headers but those that describe the bytes as received or the hop, those `connection` names, the
   * credential the caller proved itself with (the route's header, the terminator's certificate header), and ours.
   */
  private passedHeaders(route: EntryRouteRow, given: IncomingHttpHeaders): Record<string, string> {
    const named = String(given.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase());
    const credential = credentialHeader(route.caller_authentication);
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(given)) {
      if (value === undefined || NOT_PASSED.has(name) || named.includes(name) || OURS.test(name)) continue;
      if (name === credential || name === this.config.inboundClientCertHeader) continue;
      out[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return out;
  }
}
