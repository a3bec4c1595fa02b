import { createHash, createHmac, createPublicKey, createSecretKey, KeyObject } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { Injectable, Optional } from '@nestjs/common';
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
import type { ClientIdentity, OutboundRequest } from './outbound-request';

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

type Material = HmacMaterial | JweMaterial | TlsMaterial | TemplateSecretsMaterial;

/** Why a stored method cannot be used; the message never holds a field's value. */
class Unusable extends Error {}

/**
 * Applies stored authentication methods to an OutboundRequest, in the order the caller listed
 * them, each step taking the request as the previous one left it: jwe-payload replaces the body with
 * the compact JWE, hmac-signature signs the bytes that will be sent, mutual-tls sets the client
 * identity. Values are used exactly as entered (spec 5.3 rule 4). A method that cannot be used is a
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

  constructor(@Optional() authentications?: ForwardAuthenticationsService) {
    authentications?.onMethodChanged((methodId) => this.forget(methodId));
  }

  /** Drops what was prepared for a method (null: for all), when it changed in any process. */
  forget(methodId: string | null): void {
    if (methodId === null) this.prepared.clear();
    else this.prepared.delete(methodId);
  }

  async apply(
    request: OutboundRequest,
    methods: readonly UsableAuthenticationMethod[],
    nowMs = Date.now(),
  ): Promise<OutboundRequest> {
    let current = request;
    for (const method of methods) {
      const material = this.material(method);
      try {
        current = await step(current, material, nowMs);
      } catch (error) {
        if (error instanceof Unusable) throw unusable(method, error.message);
        throw error;
      }
    }
    return current;
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
    default:
      throw new Unusable('its kind is not supported here');
  }
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
  while (i < template.length) {
    if (template[i] === '{') {
      const end = template.indexOf('}', i + 1);
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
  // createSecureContext({ ca }) accepts any text, so it cannot tell a broken bundle; X.509 parsing
  // of each block can. Methods stored before creation refused such a bundle still reach here.
  if (identity.ca !== undefined && !parseCertificates(identity.ca)) {
    throw new Unusable('its ca_certificates are not PEM certificates that parse');
  }
}
