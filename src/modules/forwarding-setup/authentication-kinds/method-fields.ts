import { createPrivateKey, createPublicKey, KeyObject, X509Certificate } from 'node:crypto';
import type { ProblemFieldError } from '../../../platform/problem/problem';
import { AuthenticationKind, FieldDescription, KINDS, SECRET_NAME, SIGNING_TEMPLATE_VARIABLES } from './kinds';
import { readResponseKey, ResponseKeyFacts, responseKeyFacts } from './response-keys';
import { keyChoiceErrors, signerFormatProblem, signingKeyWarnings } from './signer-fields';
import { hostsEnable } from '../targets/http-methods';
import { refusalOf, transportOf } from '../targets/transport';

/**
 * The rules that the kind descriptions (kinds.ts) imply: what refuses a request (400, naming the
 * field), what only earns a warning, and the facts derived from non-secret fields. Nothing here
 * rewrites a value, and no message quotes one: a secret pasted into the wrong field must not come
 * back in an error.
 */

export interface MethodWarning {
  code: string;
  field: string;
  message: string;
}

interface CertificateFacts {
  subject: string;
  issuer: string;
  serial_number: string;
  not_before: string;
  not_after: string;
  fingerprint_sha256: string;
}

export interface MethodDetails {
  certificates?: CertificateFacts[];
  ca_certificates?: CertificateFacts[];
  public_key?: { type: string; size_bits?: number; curve?: string };
  /** Stored at write time (the key itself is sealed): that one is set, and which. */
  response_private_key?: ResponseKeyFacts;
}

const WHITESPACE = ' \t\r\n';
const EXPIRY_NOTICE_MS = 30 * 24 * 3600_000;
/** RFC 9110 token characters. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers a method may not set: the transport owns them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
]);

function at(field: string): string {
  return `fields.${field}`;
}

function bodyError(name: string, message: string): ProblemFieldError {
  return { location: 'body', name, message };
}

/** Control characters (other than tab) and anything outside Latin-1 cannot travel in a header value. */
function headerValueProblem(value: string): string | null {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f || c > 0xff) return 'contains a character a header value cannot carry';
  }
  return null;
}

function templateProblem(template: string): string | null {
  let from = 0;
  for (;;) {
    const open = template.indexOf('{', from);
    if (open < 0) return null;
    const close = template.indexOf('}', open + 1);
    if (close < 0) return 'has a "{" that is never closed';
    const name = template.slice(open + 1, close);
    if (!(SIGNING_TEMPLATE_VARIABLES as readonly string[]).includes(name)) {
      return `uses an unknown variable; the variables are ${SIGNING_TEMPLATE_VARIABLES.map((v) => `{${v}}`).join(', ')}`;
    }
    from = close + 1;
  }
}

function fieldProblem(field: FieldDescription, value: string): string | null {
  if (value.length === 0) return 'must not be empty (leave an optional field out instead)';
  if (value.length > field.maxLength) return `must be at most ${field.maxLength} characters`;
  // jsonb, where non-secret fields are kept, cannot hold U+0000; no valid value of any field contains it.
  if (value.includes('\u0000')) return 'must not contain the NUL character';
  // A lone surrogate has no UTF-8 form: it could be neither stored nor sent as entered.
  if (Buffer.from(value, 'utf8').toString('utf8') !== value) return 'must be well-formed Unicode (no lone surrogate)';
  switch (field.format) {
    case 'enum':
      return field.enum!.includes(value) ? null : `must be one of ${field.enum!.join(', ')} (exactly)`;
    case 'header-name':
      if (!TOKEN.test(value)) return 'must be an HTTP header name';
      return RESERVED_HEADERS.has(value.toLowerCase()) ? 'names a header the connection itself sets' : null;
    case 'header-value':
      return headerValueProblem(value);
    case 'signing-template':
      return templateProblem(value);
    case 'secret-name':
      return SECRET_NAME.test(value) ? null : 'may hold only letters, digits, _ and - (as SECRET.name spells it)';
    case 'key-id':
    case 'base64':
    case 'aws-scope':
    case 'signature-components':
    case 'signature-label':
    case 'seconds':
      return signerFormatProblem(field.format, value);
    case 'outbound-url':
      return outboundUrlProblem(value);
    case 'private-key': {
      // Refused rather than warned about (decision 0103): a key that cannot decrypt would fail every answer.
      const read = readResponseKey(value);
      return 'problem' in read ? read.problem : null;
    }
    case 'pem-certificates':
    case 'public-key':
      // Non-secret fields are returned to callers: a private key pasted here would be echoed.
      if (value.includes('PRIVATE KEY') || looksLikePrivateJwk(value))
        return 'holds a private key; this field is returned in responses, so it is refused';
      // Node's TLS takes any text as a CA bundle, so a bundle that does not parse would only fail at
      // the handshake of every forward; the certificate itself stays a warning (its key is secret, and
      // the pair is checked together at forward time).
      if (field.name === 'ca_certificates' && !parseCertificates(value))
        return 'must be PEM certificates (-----BEGIN CERTIFICATE----- blocks) that each parse as X.509';
      return null;
    default:
      return null;
  }
}

/**
 * An absolute http(s) URL (whether this process may call it is the outbound policy's, asked with its
 * config: tokenUrlErrors); credentials in it would be returned with the method's public fields, so they are refused.
 */
function outboundUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https (or http) URL';
  if (url.username || url.password) return 'must not hold a user name or password (they would be shown in answers)';
  if (url.hash || value.includes('#')) return 'must not have a fragment';
  return null;
}

function looksLikePrivateJwk(value: string): boolean {
  if (!value.trimStart().startsWith('{')) return false;
  try {
    const jwk = JSON.parse(value) as Record<string, unknown>;
    return typeof jwk === 'object' && jwk !== null && 'd' in jwk;
  } catch {
    return false;
  }
}

/**
 * An oauth2-client-credentials method's token_url by the outbound policy and against its config's hosts
 * (or its definition's): the token endpoint is called as a target is, so it must be a URL the policy
 * allows on a host the config enables (both checked again at every use).
 */
export function tokenUrlErrors(
  fields: Readonly<Record<string, string>>,
  hosts: readonly string[],
  insecureHosts: ReadonlySet<string>,
): ProblemFieldError[] {
  const url = new URL(fields.token_url);
  const refusal = refusalOf(transportOf(insecureHosts, url));
  if (refusal) return [bodyError(at('token_url'), `is ${refusal}`)];
  if (hostsEnable(new Set(hosts), url)) return [];
  const message = 'its host is not one of the hosts of this config (or of its definition); add it there first';
  return [bodyError(at('token_url'), message)];
}

/**
 * `fields` of a create or replace request → the field errors (empty when valid). Unknown names,
 * missing required fields, non-strings and malformed values are each named as `fields.<name>`.
 */
export function fieldErrors(kind: AuthenticationKind, fields: unknown): ProblemFieldError[] {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    return [bodyError('fields', 'must be an object of strings')];
  const described = new Map(KINDS[kind].fields.map((f) => [f.name, f]));
  const errors: ProblemFieldError[] = [];
  for (const [name, value] of Object.entries(fields as Record<string, unknown>)) {
    const field = described.get(name);
    if (!field) {
      errors.push(
        bodyError(
          at(name.slice(0, 64)),
          `is not a field of ${kind}; its fields are ${[...described.keys()].join(', ')}`,
        ),
      );
      continue;
    }
    if (typeof value !== 'string') {
      errors.push(bodyError(at(name), 'must be a string'));
      continue;
    }
    const problem = fieldProblem(field, value);
    if (problem) errors.push(bodyError(at(name), problem));
  }
  for (const field of described.values()) {
    if (field.required && !Object.prototype.hasOwnProperty.call(fields, field.name))
      errors.push(bodyError(at(field.name), 'is required'));
  }
  if (kind === 'http-message-signature') errors.push(...keyChoiceErrors(fields as Record<string, unknown>, bodyError));
  return errors;
}

/** Splits a PEM bundle into its CERTIFICATE blocks with two indexOf walks (no regex over input). */
function certificateBlocks(pem: string): string[] {
  const BEGIN = '-----BEGIN CERTIFICATE-----';
  const END = '-----END CERTIFICATE-----';
  const blocks: string[] = [];
  let from = 0;
  for (;;) {
    const start = pem.indexOf(BEGIN, from);
    if (start < 0) return blocks;
    const end = pem.indexOf(END, start);
    if (end < 0) return [...blocks, pem.slice(start)];
    blocks.push(pem.slice(start, end + END.length));
    from = end + END.length;
  }
}

/** Parsed certificates, or null when the text holds none or one does not parse. */
export function parseCertificates(pem: string): X509Certificate[] | null {
  const blocks = certificateBlocks(pem);
  if (blocks.length === 0) return null;
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch {
    return null;
  }
}

function facts(certificate: X509Certificate): CertificateFacts {
  return {
    subject: certificate.subject,
    issuer: certificate.issuer,
    serial_number: certificate.serialNumber,
    not_before: new Date(certificate.validFrom).toISOString(),
    not_after: new Date(certificate.validTo).toISOString(),
    fingerprint_sha256: certificate.fingerprint256,
  };
}

function expiryWarnings(field: string, certificates: X509Certificate[], now: number): MethodWarning[] {
  const warnings: MethodWarning[] = [];
  certificates.forEach((certificate, index) => {
    const which = certificates.length > 1 ? `certificate ${index + 1} of ${field}` : field;
    const notAfter = new Date(certificate.validTo).getTime();
    if (notAfter <= now)
      warnings.push({
        code: 'certificate-expired',
        field,
        message: `${which} expired on ${new Date(notAfter).toISOString()}`,
      });
    else if (notAfter - now <= EXPIRY_NOTICE_MS) {
      warnings.push({
        code: 'certificate-expires-soon',
        field,
        message: `${which} expires on ${new Date(notAfter).toISOString()}, within 30 days`,
      });
    }
    const notBefore = new Date(certificate.validFrom).getTime();
    if (notBefore > now)
      warnings.push({
        code: 'certificate-not-yet-valid',
        field,
        message: `${which} is valid only from ${new Date(notBefore).toISOString()}`,
      });
  });
  return warnings;
}

/** node:crypto reads PEM (SPKI, PKCS#1) and JWK; a text that starts with "{" is taken for a JWK. */
function parsePublicKey(value: string): KeyObject | null {
  try {
    if (value.trimStart().startsWith('{'))
      return createPublicKey({ key: JSON.parse(value) as import('node:crypto').JsonWebKey, format: 'jwk' });
    return createPublicKey(value);
  } catch {
    return null;
  }
}

/** Whether a key can serve the JWE key management algorithm `alg`. */
function keyFitsAlgorithm(key: KeyObject, algorithm: string): boolean {
  if (algorithm === 'RSA-OAEP-256') return key.asymmetricKeyType === 'rsa';
  if (algorithm === 'ECDH-ES+A256KW') {
    if (key.asymmetricKeyType === 'x25519' || key.asymmetricKeyType === 'x448') return true;
    return (
      key.asymmetricKeyType === 'ec' &&
      ['prime256v1', 'secp384r1', 'secp521r1'].includes(key.asymmetricKeyDetails?.namedCurve ?? '')
    );
  }
  return false;
}

/**
 * What the non-secret fields say, worked out at every read: certificate facts and the warnings that
 * depend on the clock or on public material only (expiry, a PEM or public key that does not parse).
 */
export function describePublicFields(
  kind: AuthenticationKind,
  fields: Readonly<Record<string, string>>,
  now: number,
): { details: MethodDetails; warnings: MethodWarning[] } {
  const details: MethodDetails = {};
  const warnings: MethodWarning[] = [];
  if (kind === 'mutual-tls') {
    for (const field of ['certificate', 'ca_certificates'] as const) {
      const pem = fields[field];
      if (pem === undefined) continue;
      const certificates = parseCertificates(pem);
      if (!certificates) {
        warnings.push({ code: 'pem-unparseable', field, message: `${field} holds no PEM certificate that parses` });
        continue;
      }
      details[field === 'certificate' ? 'certificates' : 'ca_certificates'] = certificates.map(facts);
      warnings.push(...expiryWarnings(field, certificates, now));
    }
  }
  if (kind === 'jwe-payload') {
    const key = parsePublicKey(fields.public_key);
    if (!key)
      warnings.push({
        code: 'public-key-unparseable',
        field: 'public_key',
        message: 'public_key is neither a PEM public key nor a JWK that parses',
      });
    else {
      const info = key.asymmetricKeyDetails;
      details.public_key = {
        type: key.asymmetricKeyType ?? 'unknown',
        ...(info?.modulusLength ? { size_bits: info.modulusLength } : {}),
        ...(info?.namedCurve ? { curve: info.namedCurve } : {}),
      };
      if (!keyFitsAlgorithm(key, fields.algorithm)) {
        warnings.push({
          code: 'public-key-algorithm-mismatch',
          field: 'public_key',
          message: `a ${details.public_key.type} key cannot be used with ${fields.algorithm}`,
        });
      }
    }
  }
  return { details, warnings };
}

/** Opens a private key as node:crypto would at forward time, or null (bad PEM, wrong or missing passphrase). */
function parsePrivateKey(pem: string, passphrase: string | undefined): KeyObject | null {
  try {
    return createPrivateKey(passphrase === undefined ? pem : { key: pem, passphrase });
  } catch {
    return null;
  }
}

/**
 * The warnings that need the secret fields, worked out once when they are written (and stored with
 * the method, so a read never decrypts): whitespace at either end of a secret, a private key that does
 * not open or does not match the certificate.
 */
export function secretWarnings(kind: AuthenticationKind, fields: Readonly<Record<string, string>>): MethodWarning[] {
  const warnings: MethodWarning[] = [];
  for (const field of KINDS[kind].fields) {
    const value = fields[field.name];
    if (!field.secret || value === undefined || field.format !== 'text') continue;
    if (WHITESPACE.includes(value[value.length - 1])) {
      warnings.push({
        code: 'secret-trailing-whitespace',
        field: field.name,
        message: `${field.name} ends with a space or line break, which is used as part of it`,
      });
    }
    if (WHITESPACE.includes(value[0])) {
      warnings.push({
        code: 'secret-leading-whitespace',
        field: field.name,
        message: `${field.name} starts with a space or line break, which is used as part of it`,
      });
    }
  }
  if ((kind === 'oauth1-rsa' || kind === 'http-message-signature') && fields.private_key !== undefined) {
    const wanted = kind === 'oauth1-rsa' ? 'rsa' : fields.algorithm;
    warnings.push(...signingKeyWarnings(fields.private_key, wanted));
  }
  if (kind === 'mutual-tls') {
    const key = parsePrivateKey(fields.private_key, fields.passphrase);
    if (!key) {
      warnings.push({
        code: 'pem-unparseable',
        field: 'private_key',
        message:
          fields.passphrase === undefined
            ? 'private_key does not parse (or is encrypted and needs a passphrase)'
            : 'private_key does not parse or does not open with the passphrase',
      });
    } else {
      const leaf = parseCertificates(fields.certificate)?.[0];
      if (leaf && !leaf.checkPrivateKey(key)) {
        warnings.push({
          code: 'private-key-mismatch',
          field: 'private_key',
          message: 'private_key is not the key of the first certificate in certificate',
        });
      }
    }
  }
  return warnings;
}

/** What may be shown of the secret fields, stored with the method: a response key's facts (decision 0103). */
export async function secretDetails(
  kind: AuthenticationKind,
  fields: Readonly<Record<string, string>>,
): Promise<MethodDetails> {
  const value = kind === 'jwe-payload' ? fields.response_private_key : undefined;
  const read = value === undefined ? null : readResponseKey(value);
  return read && 'key' in read ? { response_private_key: await responseKeyFacts(read.key) } : {};
}
