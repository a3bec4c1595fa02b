import { createHash, createHmac, createSecretKey, timingSafeEqual, X509Certificate } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { ProblemException } from '../../../platform/problem/problem';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { caCertificates, CallerSettings, secretBytes } from '../routes/caller-authentication';
import type { EntryRouteRow } from '../routes/inbound-routes.repository';
import { InboundRoutesService } from '../routes/inbound-routes.service';
import { InboundErrors } from './inbound.errors';
import { InboundRouteWindowsRepository } from './inbound-route-windows.repository';

/** TLS client authentication (RFC 5280 id-kp-clientAuth): a certificate that names its uses must name this one. */
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

/** Who the caller is, as its record says: the kind, and a certificate's subject and fingerprint. */
export interface VerifiedCaller {
  description: string;
}

/**
 * A caller checked against its route's caller_authentication (decision 0154): `beforeBody` with the headers alone
 * (a secret, a certificate, the rate limit, the signature headers' presence), so a caller without them is refused
 * before a byte of its body is read; `withBody` for the kinds that sign the body (hmac), before anything is parsed or
 * stored. Secrets are compared in constant time, as SHA-256 digests (equal lengths whatever was sent).
 */
@Injectable()
export class CallerVerification {
  constructor(
    private readonly routes: InboundRoutesService,
    private readonly windows: InboundRouteWindowsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async beforeBody(route: EntryRouteRow, headers: IncomingHttpHeaders): Promise<VerifiedCaller> {
    const settings = route.caller_authentication;
    switch (settings.kind) {
      case 'shared-secret': {
        const given = single(headers[settings.header]);
        if (given === undefined) throw refused(`no ${settings.header} header`, settings.header);
        if (!this.withSecret(route, (secret) => sameDigest(Buffer.from(given, 'utf8'), secret)))
          throw refused(`the ${settings.header} header holds another secret`, settings.header);
        return { description: 'shared-secret' };
      }
      case 'hmac':
        for (const name of signatureHeaders(settings))
          if (single(headers[name]) === undefined) throw refused(`no ${name} header`, name);
        return { description: `hmac ${settings.scheme}` };
      case 'mutual-tls':
        return this.certificate(settings, headers);
      case 'none': {
        const { requests, per_seconds } = settings.rate_limit;
        const window = await this.windows.count(route.id, per_seconds);
        if (window.requests > requests)
          throw new ProblemException(
            InboundErrors.rateLimited,
            `The route takes ${requests} requests per ${per_seconds} s from callers that do not authenticate.`,
            undefined,
            { 'retry-after': String(window.retryAfterSeconds) },
          );
        return { description: 'none' };
      }
    }
  }

  /** The body's signature (hmac); the other kinds were settled by beforeBody. `body` is as received. */
  withBody(route: EntryRouteRow, headers: IncomingHttpHeaders, body: Buffer): void {
    const settings = route.caller_authentication;
    if (settings.kind !== 'hmac') return;
    if (settings.scheme === 'standard-webhooks') {
      const id = single(headers['webhook-id'])!;
      const timestamp = single(headers['webhook-timestamp'])!;
      const seconds = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
      if (!(Math.abs(this.clock.epochMs() / 1000 - seconds) <= settings.tolerance_seconds))
        throw refused(`webhook-timestamp is not within ${settings.tolerance_seconds} s of now`, 'webhook-timestamp');
      const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]);
      const expected = this.withSecret(route, (secret) => hmac(secret, signed));
      const signatures = single(headers['webhook-signature'])!
        .split(' ')
        .filter((entry) => entry.startsWith('v1,'))
        .map((entry) => Buffer.from(entry.slice(3), 'base64'));
      if (!signatures.some((signature) => sameDigest(signature, expected)))
        throw refused('no webhook-signature is the body’s', 'webhook-signature');
      return;
    }
    const given = single(headers[settings.header])!.replace(/^sha256=/i, '');
    const expected = this.withSecret(route, (secret) => hmac(secret, body));
    const decoded = settings.encoding === 'hex' ? Buffer.from(given, 'hex') : Buffer.from(given, 'base64');
    if (!sameDigest(decoded, expected))
      throw refused(`the ${settings.header} header is not the body’s HMAC`, settings.header);
  }

  private withSecret<T>(route: EntryRouteRow, use: (secret: Buffer) => T): T {
    const sealed = this.routes.secretOf(route);
    const secret = secretBytes(sealed.toString('utf8'));
    try {
      return use(secret);
    } finally {
      sealed.fill(0);
      secret.fill(0);
    }
  }

  /**
   * The certificate the TLS terminator verified the handshake of and passes on (INBOUND_CLIENT_CERT_HEADER:
   * URL-encoded PEM, or base64 DER), issued by one of the route's certificate authorities, valid now, for client
   * authentication when it names its uses.
   */
  private certificate(
    settings: Extract<CallerSettings, { kind: 'mutual-tls' }>,
    headers: IncomingHttpHeaders,
  ): VerifiedCaller {
    const header = this.config.inboundClientCertHeader;
    if (header === null)
      throw refused(
        'mutual TLS is not available: the API’s TLS terminator passes on no client certificate',
        'certificate',
      );
    const value = single(headers[header]);
    if (value === undefined) throw refused('no client certificate', header);
    let certificate: X509Certificate;
    try {
      const text = decodeURIComponent(value);
      certificate = new X509Certificate(text.includes('-----BEGIN') ? text : Buffer.from(text, 'base64'));
    } catch {
      throw refused('the client certificate does not read as one', header);
    }
    const now = this.clock.epochMs();
    if (now < Date.parse(certificate.validFrom) || now > Date.parse(certificate.validTo))
      throw refused('the client certificate is not valid now', header);
    const uses = certificate.keyUsage;
    if (Array.isArray(uses) && !uses.includes(CLIENT_AUTH))
      throw refused('the client certificate is not for client authentication', header);
    const issued = (caCertificates(settings.ca_certificates) ?? []).some(
      (ca) => certificate.checkIssued(ca) && certificate.verify(ca.publicKey),
    );
    if (!issued) throw refused('the client certificate is issued by none of the route’s authorities', header);
    const subject = certificate.subject.replace(/\s+/g, ' ').slice(0, 200);
    return {
      description: `mutual-tls ${subject} sha256:${certificate.fingerprint256.replaceAll(':', '').toLowerCase()}`,
    };
  }
}

function signatureHeaders(settings: Extract<CallerSettings, { kind: 'hmac' }>): string[] {
  return settings.scheme === 'standard-webhooks'
    ? ['webhook-id', 'webhook-timestamp', 'webhook-signature']
    : [settings.header];
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function hmac(key: Buffer, data: Buffer): Buffer {
  return createHmac('sha256', createSecretKey(key)).update(data).digest();
}

/** Constant time whatever the lengths: the digests of both are compared. */
function sameDigest(given: Buffer, expected: Buffer): boolean {
  const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function refused(why: string, name: string): ProblemException {
  return new ProblemException(InboundErrors.callerUnauthenticated, `The caller is not authenticated: ${why}.`, [
    { location: 'header', name, message: why },
  ]);
}
