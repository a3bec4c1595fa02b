/**
 * Encrypted answers (message-level encryption, issue 27 item 2, decision 0103). A `jwe-payload` method may
 * hold the merchant's `response_private_key`; when a forward lists such a method and the downstream answers
 * with a compact JWE, ForwardExecutor has the answer decrypted here before the response rules run
 * (ResponseFilter), on the synchronous and the queued path alike, so the rules see the plaintext and the
 * caller (or the sealed job outcome) gets the plaintext after them.
 *
 *   open(methods, response): Promise<DownstreamResponse>
 *     The answer unchanged (streamed too) when no listed method holds a response key or its type cannot
 *     carry a JWE; else read whole (at most RULES_MAX_BYTES) and, when it is a JWE (an `application/jose`
 *     compact JWE, or JSON `{"encData": "<compact JWE>"}` as Visa answers), the plaintext in its place.
 *     An answer that is no JWE goes on as it came (error answers of MLE APIs are plaintext). Throws a
 *     502 ProblemException (response-not-decryptable, response-too-large-to-decrypt) otherwise.
 *
 * Decryption is jose's compactDecrypt, with the algorithms limited to RSA-OAEP and ECDH-ES families and
 * AES content encryption (no PBES2, whose iteration count the sender chooses), and a compressed (`zip`)
 * plaintext inflated to at most RULES_MAX_BYTES: linear in the answer.
 */
import type { KeyObject } from 'node:crypto';
import { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { compactDecrypt, errors as jose } from 'jose';
import { LRUCache } from 'lru-cache';
import { ProblemException } from '../../../platform/problem/problem';
import { readResponseKey } from '../../forwarding-setup/authentication-kinds/response-keys';
import {
  AUTHENTICATIONS_HEADER,
  type UsableAuthenticationMethod,
} from '../../forwarding-setup/authentication-methods/forward-authentications.service';
import { DownstreamProblem, type DownstreamResponse } from '../sending/downstream-client';
import { ForwardResponseErrors } from './forward-responses.errors';
import { isCompressed, isJsonAnswer, readCapped, responseHeader, RULES_MAX_BYTES } from './response-filter';

const KEY_MANAGEMENT = [
  'RSA-OAEP',
  'RSA-OAEP-256',
  'RSA-OAEP-384',
  'RSA-OAEP-512',
  'ECDH-ES',
  'ECDH-ES+A128KW',
  'ECDH-ES+A192KW',
  'ECDH-ES+A256KW',
];
const CONTENT_ENCRYPTION = ['A128GCM', 'A192GCM', 'A256GCM', 'A128CBC-HS256', 'A192CBC-HS384', 'A256CBC-HS512'];
/** Five base64url segments; the encrypted key is empty for ECDH-ES, the ciphertext for an empty plaintext. */
const COMPACT_JWE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/;
/** A `cty` usable as a content-type: type/subtype, or a subtype of application/ (RFC 7516 4.1.12). */
const MEDIA_TYPE = /^[A-Za-z0-9!#$&^_.+-]{1,100}(?:\/[A-Za-z0-9!#$&^_.+-]{1,100})?$/;
/** Visa's MLE answers (and the request body it takes) wrap the compact JWE as `{"encData": "…"}`. */
const ENVELOPE_MEMBER = 'encData';

type Envelope = 'compact' | 'json';

@Injectable()
export class MleAnswers {
  /** Parsed keys by method id and version: an updated method's key is read afresh, a stale one ages out. */
  private readonly keys = new LRUCache<string, KeyObject>({ max: 1_000, ttl: 5 * 60_000 });

  async open(
    methods: readonly UsableAuthenticationMethod[],
    response: DownstreamResponse,
  ): Promise<DownstreamResponse> {
    const holders = methods.filter((m) => m.kind === 'jwe-payload' && m.fields.response_private_key !== undefined);
    if (holders.length === 0) return response;
    const envelope = envelopeOf(response);
    if (envelope === null) return response;
    const body = response.body instanceof Readable ? await readCapped(response.body, tooLarge) : response.body;
    const jwe = jweIn(envelope, body);
    // Not a JWE (an error answer, most often): passed on as it came, as Visa's and Mastercard's clients do.
    if (jwe === null) return { ...response, body };
    const { plaintext, cty } = await this.decrypt(holders, jwe);
    const headers = { ...response.headers };
    // The length changed; the transport computes it again.
    delete headers['content-length'];
    headers['content-type'] = contentType(cty, plaintext);
    return { ...response, headers, body: plaintext };
  }

  private async decrypt(
    holders: UsableAuthenticationMethod[],
    jwe: string,
  ): Promise<{ plaintext: Buffer; cty: unknown }> {
    let why = 'it does not decrypt with the response key';
    // Usually one method holds a key; with several, the answer is for one of them.
    for (const method of holders) {
      const key = this.key(method);
      if (key === null) {
        why = 'the stored response key does not parse';
        continue;
      }
      try {
        const opened = await compactDecrypt(jwe, key, {
          keyManagementAlgorithms: KEY_MANAGEMENT,
          contentEncryptionAlgorithms: CONTENT_ENCRYPTION,
          // A `zip: DEF` plaintext is inflated to at most what an answer under the rules may be.
          maxDecompressedLength: RULES_MAX_BYTES,
        });
        return { plaintext: Buffer.from(opened.plaintext), cty: opened.protectedHeader.cty };
      } catch (error) {
        why = reason(error);
      }
    }
    throw notDecryptable(
      holders.map((m) => m.id),
      why,
    );
  }

  private key(method: UsableAuthenticationMethod): KeyObject | null {
    const id = `${method.id}:${method.version}`;
    const cached = this.keys.get(id);
    if (cached) return cached;
    const read = readResponseKey(method.fields.response_private_key);
    if (!('key' in read)) return null;
    this.keys.set(id, read.key);
    return read.key;
  }
}

/** Which wrapping the answer's type allows, or null when it cannot carry a JWE we would read. */
function envelopeOf(response: DownstreamResponse): Envelope | null {
  // A compressed answer is not read here: it goes on (the rules refuse it if they apply).
  if (isCompressed(response)) return null;
  if (/^application\/jose\s*(?:;|$)/i.test(responseHeader(response, 'content-type') ?? '')) return 'compact';
  return isJsonAnswer(response) ? 'json' : null;
}

/** The compact JWE the answer is, or null when it is none. */
function jweIn(envelope: Envelope, body: Buffer): string | null {
  if (envelope === 'compact') {
    const text = body.toString('latin1').trim();
    return COMPACT_JWE.test(text) ? text : null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return null; // the rules, if any, say what is wrong with it
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const value = Object.prototype.hasOwnProperty.call(parsed, ENVELOPE_MEMBER)
    ? (parsed as Record<string, unknown>)[ENVELOPE_MEMBER]
    : undefined;
  return typeof value === 'string' && COMPACT_JWE.test(value.trim()) ? value.trim() : null;
}

/** The JWE's `cty` when it is a media type; else application/json for JSON, application/octet-stream for the rest. */
function contentType(cty: unknown, plaintext: Buffer): string {
  if (typeof cty === 'string' && MEDIA_TYPE.test(cty)) return cty.includes('/') ? cty : `application/${cty}`;
  try {
    JSON.parse(plaintext.toString('utf8'));
    return 'application/json';
  } catch {
    return 'application/octet-stream';
  }
}

/** A fixed phrase per jose failure: never jose's message, which may quote header values. */
function reason(error: unknown): string {
  if (error instanceof jose.JOSEAlgNotAllowed)
    return `its alg or enc is not one we accept (${KEY_MANAGEMENT.join(', ')}; ${CONTENT_ENCRYPTION.join(', ')})`;
  if (error instanceof jose.JOSENotSupported) return 'it uses a JWE feature or key type we do not support';
  if (error instanceof jose.JWEInvalid) return 'it is not a well-formed JWE (or inflates past the size cap)';
  return 'it does not decrypt with the response key (encrypted to another key, or altered)';
}

/** The downstream has answered (a retry would repeat the request), but the answer is withheld. */
function notDecryptable(ids: string[], why: string): ProblemException {
  return new DownstreamProblem(
    ForwardResponseErrors.responseNotDecryptable,
    `The downstream answered with a JWE that cannot be decrypted: ${why}. It was not returned.`,
    true,
    [{ location: 'header', name: AUTHENTICATIONS_HEADER, message: `${ids.join(', ')}: ${why}` }],
  );
}

function tooLarge(): ProblemException {
  return new DownstreamProblem(
    ForwardResponseErrors.responseTooLargeToDecrypt,
    `The downstream’s answer is larger than the ${RULES_MAX_BYTES} bytes an encrypted answer is read to; it was not returned.`,
    true,
    [{ location: 'header', name: AUTHENTICATIONS_HEADER, message: `answer over ${RULES_MAX_BYTES} bytes` }],
  );
}
