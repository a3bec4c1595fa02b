import { createHash, createHmac, createPublicKey, createSecretKey, KeyObject } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { CompactEncrypt } from 'jose';
import { LRUCache } from 'lru-cache';
import { ProblemException } from '../../../platform/problem/problem';
import { ForwardAuthenticationErrors } from '../../forwarding-setup/authentication-methods/forward-authentications.errors';
import {
  AUTHENTICATIONS_HEADER,
  ForwardAuthenticationsService,
  UsableAuthenticationMethod,
} from '../../forwarding-setup/authentication-methods/forward-authentications.service';
import {
  DEFAULT_SIGNING_TEMPLATE,
  SIGNING_TEMPLATE_VARIABLES,
} from '../../forwarding-setup/authentication-kinds/kinds';
import { parseCertificates } from '../../forwarding-setup/authentication-kinds/method-fields';
import { openSigningKey, signatureComponents } from '../../forwarding-setup/authentication-kinds/signer-fields';
import { openedKeyBoundsProblem } from '../../forwarding-setup/authentication-kinds/private-keys';
import { CLOCK, Clock, SYSTEM_CLOCK } from '../../../platform/time/clock';
import { signerHeaders } from '../../forwarding-setup/request-signers/signers';
import type { SignerMaterial } from '../../forwarding-setup/request-signers/signers';
import type { ClientIdentity, OutboundRequest } from './outbound-request';
import { OAuth2Client, OAuth2Tokens, TokenUrlRefused } from './oauth2-tokens';

const HMAC_ALGORITHMS = new Set(['sha256', 'sha512']);
const HMAC_ENCODINGS = new Set(['hex', 'base64']);
const JWE_ALGORITHMS = new Set(['RSA-OAEP-256', 'ECDH-ES+A256KW']);
const JWE_ENCRYPTIONS = new Set(['A256GCM', 'A128CBC-HS256']);
const TEMPLATE_TOKENS = new Set<string>(SIGNING_TEMPLATE_VARIABLES);
/** RFC 9110 token characters; a header name must be one. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/i;
/** What a header value can carry (as forwarding.service.ts): tab, visible ASCII, Latin-1's upper half. */
const UNSENDABLE_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

type TemplatePart = Buffer | 'method' | 'path' | 'timestamp' | 'body' | 'body_sha256';

interface HmacMaterial {
  kind: 'hmac-signature';
  /** A KeyObject, made once per method version: Node.js 24 checks a Buffer key at ~25 µs a call (docs/decisions/0105). */
  secret: KeyObject;
  algorithm: string;
  encoding: 'hex' | 'base64';
  header: string;
  timestampHeader: string | undefined;
  template: TemplatePart[];
  prefix: string;
}

interface JweMaterial {
  kind: 'jwe-payload';
  key: KeyObject;
  header: { alg: string; enc: string; kid?: string; cty?: string };
}

interface TlsMaterial {
  kind: 'mutual-tls';
  identity: ClientIdentity;
}

/** Read by the fill (`hmac_sha256(SECRET.name)`, decision 0102); nothing to apply to the request. */
interface TemplateSecretsMaterial {
  kind: 'template-secrets';
}

/** Its token is obtained (or taken from the cache) at each use, by OAuth2Tokens. */
interface OAuth2Material {
  kind: 'oauth2-client-credentials';
  client: OAuth2Client;
}
type Material = HmacMaterial | JweMaterial | TlsMaterial | TemplateSecretsMaterial | SignerMaterial | OAuth2Material;

/** Why a stored method cannot be used; the message never holds a field's value. */
class Unusable extends Error {}

/**
 * Applies stored authentication methods to an OutboundRequest, in the order the caller listed
 * them, each step taking the request as the previous one left it: jwe-payload replaces the body with
 * the compact JWE, hmac-signature signs the bytes that will be sent, mutual-tls sets the client
 * identity, oauth2-client-credentials sets `authorization: Bearer` to its access token (OAuth2Tokens;
 * answered() drops it when the target refuses it). Values are used exactly as entered (spec 5.3 rule 4). A method that cannot be used is a
 * 422 naming its id, before anything is sent. Shared by the synchronous route and the queued worker:
 * nothing here knows about HTTP handlers.
 *
 * What a method needs prepared (parsed key, template, checked TLS identity) is kept per method id
 * and version for a short time, so a changed method is prepared afresh on its next use.
 */
@Injectable()
export class AuthenticationSteps {
  /** By method id, with the version it was prepared from. */
  private readonly prepared = new LRUCache<string, { version: string; material: Material }>({
    max: 10_000,
    ttl: 5 * 60_000,
  });

  /** The access tokens each request carries, by the request as apply() returned it, for answered(). */
  private readonly bearers = new WeakMap<OutboundRequest, Array<{ client: OAuth2Client; token: string }>>();

  constructor(
    @Optional() authentications?: ForwardAuthenticationsService,
    @Optional() @Inject(CLOCK) private readonly clock?: Clock,
    @Optional() private readonly tokens?: OAuth2Tokens,
  ) {
    authentications?.onMethodChanged((methodId) => this.forget(methodId));
  }

  /** Drops what was prepared for a method (null: for all), and its access token, when it changed in any process. */
  forget(methodId: string | null): void {
    if (methodId === null) this.prepared.clear();
    else this.prepared.delete(methodId);
    this.tokens?.forget(methodId);
  }

  /**
   * `configHosts`: the hosts of the config the methods belong to (the one enabling the target), which
   * an oauth2-client-credentials method's token endpoint must be among.
   */
  async apply(
    request: OutboundRequest,
    methods: readonly UsableAuthenticationMethod[],
    nowMs = (this.clock ?? SYSTEM_CLOCK).epochMs(),
    configHosts: ReadonlySet<string> = new Set(),
  ): Promise<OutboundRequest> {
    let current = request;
    const bearers: Array<{ client: OAuth2Client; token: string }> = [];
    for (const method of methods) {
      const material = this.material(method);
      try {
        if (material.kind === 'oauth2-client-credentials') {
          const token = await this.bearer(material.client, configHosts, current.timeoutMs);
          bearers.push({ client: material.client, token });
          current = { ...current, headers: { ...current.headers, authorization: `Bearer ${token}` } };
        } else current = await step(current, material, nowMs);
      } catch (error) {
        if (error instanceof Unusable) throw unusable(method, error.message);
        throw error;
      }
    }
    if (bearers.length > 0) this.bearers.set(current, bearers);
    return current;
  }

  /**
   * The target answered `status` to `request` (as apply() returned it). A 401 means it refused the access
   * token: the token is dropped in every process, so the next forward obtains a new one. The refused
   * forward is not sent again: that would disclose its card data a second time (decision 0123).
   */
  answered(request: OutboundRequest, status: number): void {
    if (status !== 401 || !this.tokens) return;
    for (const { client, token } of this.bearers.get(request) ?? []) void this.tokens.refused(client, token);
  }

  private async bearer(client: OAuth2Client, configHosts: ReadonlySet<string>, timeoutMs: number): Promise<string> {
    if (!this.tokens) throw new Unusable('this process cannot obtain access tokens');
    try {
      return await this.tokens.bearer(client, configHosts, timeoutMs);
    } catch (error) {
      if (error instanceof TokenUrlRefused) throw new Unusable(error.message);
      throw error;
    }
  }

  private material(method: UsableAuthenticationMethod): Material {
    const cached = this.prepared.get(method.id);
    if (cached?.version === method.version) return cached.material;
    let material: Material;
    try {
      material = prepare(method);
    } catch (error) {
      if (error instanceof Unusable) throw unusable(method, error.message);
      throw error;
    }
    this.prepared.set(method.id, { version: method.version, material });
    return material;
  }
}

function unusable(method: UsableAuthenticationMethod, reason: string): ProblemException {
  return new ProblemException(
    ForwardAuthenticationErrors.invalid,
    `Authentication method ${method.id} (${method.kind}) cannot be used: ${reason}. Nothing was sent.`,
    [{ location: 'header', name: AUTHENTICATIONS_HEADER, message: `${method.id}: ${reason}` }],
  );
}

async function step(request: OutboundRequest, material: Material, nowMs: number): Promise<OutboundRequest> {
  switch (material.kind) {
    case 'hmac-signature':
      return sign(request, material, nowMs);
    case 'jwe-payload':
      return encrypt(request, material);
    case 'mutual-tls':
      // Over plain http (an operator-listed insecure host) the certificate would silently not be presented.
      if (request.url.protocol !== 'https:') throw new Unusable('mutual TLS needs an https target');
      return { ...request, identity: material.identity };
    case 'template-secrets':
      return request;
    case 'http-signature':
    case 'oauth1-rsa':
    case 'aws-sigv4':
    case 'http-message-signature':
      return { ...request, headers: { ...request.headers, ...(await signerHeaders(request, material, nowMs)) } };
    case 'oauth2-client-credentials':
      // Applied by AuthenticationSteps.apply, which holds the token cache.
      return request;
  }
}

function sign(request: OutboundRequest, m: HmacMaterial, nowMs: number): OutboundRequest {
  const body = request.body ?? Buffer.alloc(0);
  const timestamp = String(Math.floor(nowMs / 1000));
  const hmac = createHmac(m.algorithm, m.secret);
  for (const part of m.template) {
    if (typeof part !== 'string') hmac.update(part);
    else if (part === 'body') hmac.update(body);
    else if (part === 'body_sha256') hmac.update(createHash('sha256').update(body).digest('hex'), 'latin1');
    else if (part === 'timestamp') hmac.update(timestamp, 'latin1');
    else if (part === 'method') hmac.update(request.method, 'latin1');
    else hmac.update(`${request.url.pathname}${request.url.search}`, 'latin1');
  }
  const headers = { ...request.headers, [m.header]: `${m.prefix}${hmac.digest(m.encoding)}` };
  if (m.timestampHeader) headers[m.timestampHeader] = timestamp;
  return { ...request, headers };
}

async function encrypt(request: OutboundRequest, m: JweMaterial): Promise<OutboundRequest> {
  let jwe: string;
  try {
    jwe = await new CompactEncrypt(request.body ?? Buffer.alloc(0)).setProtectedHeader(m.header).encrypt(m.key);
  } catch {
    // jose refuses a key that does not fit the algorithm (an RSA key for ECDH-ES, a P-192 curve, …).
    throw new Unusable(`its public key cannot be used with ${m.header.alg}`);
  }
  return {
    ...request,
    headers: { ...request.headers, 'content-type': 'application/jose' },
    body: Buffer.from(jwe, 'latin1'),
  };
}

function prepare(method: UsableAuthenticationMethod): Material {
  const f = method.fields;
  switch (method.kind) {
    case 'hmac-signature': {
      if (!HMAC_ALGORITHMS.has(f.algorithm)) throw new Unusable('its algorithm is not sha256 or sha512');
      if (!HMAC_ENCODINGS.has(f.encoding)) throw new Unusable('its encoding is not hex or base64');
      const header = headerName(f.header, 'header');
      const timestampHeader = f.timestamp_header ? headerName(f.timestamp_header, 'timestamp_header') : undefined;
      const prefix = f.prefix ?? '';
      if (UNSENDABLE_HEADER_CHAR.test(prefix)) throw new Unusable('its prefix has a character a header cannot carry');
      if (typeof f.secret !== 'string') throw new Unusable('it has no secret');
      return {
        kind: 'hmac-signature',
        // Byte for byte as entered: a trailing newline or space is part of the key.
        secret: createSecretKey(Buffer.from(f.secret, 'utf8')),
        algorithm: f.algorithm,
        encoding: f.encoding as 'hex' | 'base64',
        header,
        timestampHeader,
        template: parseTemplate(f.template ?? DEFAULT_SIGNING_TEMPLATE),
        prefix,
      };
    }
    case 'jwe-payload': {
      if (!JWE_ALGORITHMS.has(f.algorithm)) throw new Unusable('its algorithm is not RSA-OAEP-256 or ECDH-ES+A256KW');
      if (!JWE_ENCRYPTIONS.has(f.encryption)) throw new Unusable('its encryption is not A256GCM or A128CBC-HS256');
      const header: JweMaterial['header'] = { alg: f.algorithm, enc: f.encryption };
      if (f.key_id) header.kid = f.key_id;
      if (f.content_type) header.cty = f.content_type;
      return { kind: 'jwe-payload', key: publicKey(f.public_key ?? ''), header };
    }
    case 'mutual-tls': {
      const identity: ClientIdentity = {
        key: `${method.id}@${method.version}`,
        methodId: method.id,
        cert: f.certificate ?? '',
        privateKey: f.private_key ?? '',
        passphrase: f.passphrase || undefined,
        ca: f.ca_certificates || undefined,
      };
      checkIdentity(identity);
      return { kind: 'mutual-tls', identity };
    }
    case 'template-secrets':
      return { kind: 'template-secrets' };
    case 'http-signature':
      return {
        kind: 'http-signature',
        merchantId: f.merchant_id ?? '',
        keyId: f.key_id ?? '',
        secret: base64Key(f.shared_secret, 'shared_secret'),
      };
    case 'oauth1-rsa':
      return {
        kind: 'oauth1-rsa',
        consumerKey: f.consumer_key ?? '',
        key: opened(openSigningKey(f.private_key ?? '', 'rsa'), 'private_key'),
      };
    case 'aws-sigv4':
      if (typeof f.secret_access_key !== 'string') throw new Unusable('it has no secret_access_key');
      return {
        kind: 'aws-sigv4',
        accessKeyId: f.access_key_id ?? '',
        secretAccessKey: f.secret_access_key,
        sessionToken: f.session_token,
        region: f.region ?? '',
        service: f.service ?? '',
      };
    case 'http-message-signature':
      return {
        kind: 'http-message-signature',
        keyId: f.key_id ?? '',
        signingKey:
          f.algorithm === 'hmac-sha256'
            ? { algorithm: 'hmac-sha256', secret: base64Key(f.secret, 'secret') }
            : {
                algorithm: messageAlgorithm(f.algorithm),
                key: opened(openSigningKey(f.private_key ?? '', f.algorithm), 'private_key'),
              },
        components: opened(signatureComponents(f.components), 'components'),
        label: f.label ?? 'sig1',
        tag: f.tag,
        expiresIn: f.expires_in === undefined ? undefined : Number(f.expires_in),
        digest: f.content_digest === 'sha-512' ? 'sha-512' : 'sha-256',
      };
    case 'oauth2-client-credentials':
      return { kind: 'oauth2-client-credentials', client: oauth2Client(method) };
    default:
      throw new Unusable('its kind is not supported here');
  }
}

function base64Key(value: string | undefined, field: string): KeyObject {
  const bytes = Buffer.from(value ?? '', 'base64');
  if (bytes.length === 0) throw new Unusable(`its ${field} is not base64`);
  return createSecretKey(bytes);
}

/** What a field opened to (a key of the algorithm within bounds, decision 0144; RFC 9421 components), or why not. */
function opened<T>(value: T | string, field: string): T {
  if (typeof value === 'string') throw new Unusable(`its ${field} ${value}`);
  return value;
}

function messageAlgorithm(value: string): 'ed25519' | 'ecdsa-p256-sha256' | 'rsa-pss-sha512' {
  if (value === 'ed25519' || value === 'ecdsa-p256-sha256' || value === 'rsa-pss-sha512') return value;
  throw new Unusable('its algorithm is not one of ed25519, ecdsa-p256-sha256, rsa-pss-sha512, hmac-sha256');
}

/**
 * The token request of a method, made once per version: RFC 6749 §4.4.2's form, and the client
 * authenticated by HTTP Basic over the form-encoded id and secret (§2.3.1) or by both in the body.
 */
function oauth2Client(method: UsableAuthenticationMethod): OAuth2Client {
  const f = method.fields;
  let tokenUrl: URL;
  try {
    tokenUrl = new URL(f.token_url ?? '');
  } catch {
    throw new Unusable('its token_url is not a URL');
  }
  if (!f.client_id || typeof f.client_secret !== 'string') throw new Unusable('it has no client_id or client_secret');
  const clientAuth = f.client_auth ?? 'basic';
  if (clientAuth !== 'basic' && clientAuth !== 'body') throw new Unusable('its client_auth is not basic or body');
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (f.scope) form.set('scope', f.scope);
  if (f.audience) form.set('audience', f.audience);
  if (clientAuth === 'body') {
    form.set('client_id', f.client_id);
    form.set('client_secret', f.client_secret);
  }
  const basic = `${formEncoded(f.client_id)}:${formEncoded(f.client_secret)}`;
  return {
    methodId: method.id,
    version: method.version,
    tokenUrl,
    form: form.toString(),
    authorization: clientAuth === 'basic' ? `Basic ${Buffer.from(basic, 'utf8').toString('base64')}` : undefined,
  };
}

/** application/x-www-form-urlencoded, as RFC 6749 Appendix B encodes the client id and secret for Basic. */
function formEncoded(value: string): string {
  return new URLSearchParams([['', value]]).toString().slice(1);
}

function headerName(value: string | undefined, field: string): string {
  if (!value || !HEADER_NAME.test(value)) throw new Unusable(`its ${field} is not a header name`);
  return value.toLowerCase();
}

/**
 * The signed string as parts, split once: literal text (UTF-8, as entered) and the five
 * substitutions. Anything else in braces is literal text. One pass, no regular expression.
 */
export function parseTemplate(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let literal = '';
  let i = 0;
  // The next `}` at or after i + 1, found again only once i has passed it: a long run of `{` without one
  // would otherwise search to the end of the text from every brace.
  let close = -2;
  while (i < template.length) {
    if (template[i] === '{') {
      if (close !== -1 && close < i + 1) close = template.indexOf('}', i + 1);
      const end = close;
      const name = end > 0 ? template.slice(i + 1, end) : '';
      if (TEMPLATE_TOKENS.has(name)) {
        if (literal) parts.push(Buffer.from(literal, 'utf8'));
        literal = '';
        parts.push(name as TemplatePart);
        i = end + 1;
        continue;
      }
    }
    literal += template[i];
    i++;
  }
  if (literal) parts.push(Buffer.from(literal, 'utf8'));
  return parts;
}

/** A PEM public key (SPKI, PKCS#1 or a certificate) or a JWK as JSON text. */
function publicKey(text: string): KeyObject {
  try {
    if (text.trimStart().startsWith('{')) return createPublicKey({ key: JSON.parse(text) as never, format: 'jwk' });
    return createPublicKey(text);
  } catch {
    throw new Unusable('its public_key does not parse as PEM or JWK');
  }
}

/** Certificate, key and passphrase must make a TLS identity here, not fail halfway through a handshake. */
function checkIdentity(identity: ClientIdentity): void {
  try {
    createSecureContext({ cert: identity.cert, key: identity.privateKey, passphrase: identity.passphrase });
  } catch {
    throw new Unusable(
      'its certificate and private key do not make a TLS client identity (unparseable PEM, wrong passphrase, or a key that does not match)',
    );
  }
  const bounds = openedKeyBoundsProblem(identity.privateKey, identity.passphrase);
  if (bounds) throw new Unusable(`its private_key ${bounds}`);
  // createSecureContext({ ca }) accepts any text, so it cannot tell a broken bundle; X.509 parsing
  // of each block can. Methods stored before creation refused such a bundle still reach here.
  if (identity.ca !== undefined && !parseCertificates(identity.ca)) {
    throw new Unusable('its ca_certificates are not PEM certificates that parse');
  }
}
