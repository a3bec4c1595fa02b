import { createPrivateKey, KeyObject } from 'node:crypto';
import { keyBoundsProblem } from './private-keys';
import { DEFAULT_SIGNATURE_COMPONENTS } from './signer-kinds';

/**
 * The field rules of the signing kinds (signer-kinds.ts): the formats they add, which key
 * http-message-signature needs, and whether a private key can sign with an algorithm. Pure functions,
 * read by the method validation (method-fields.ts) and by the steps that prepare keys at forward time.
 */

/** Visible ASCII but `"` and `\`: safe inside a quoted header parameter and an RFC 8941 string. */
const KEY_ID = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const AWS_SCOPE = /^[a-z0-9-]+$/;
/** RFC 8941 key, as an RFC 9421 label is written. */
const SIGNATURE_LABEL = /^[a-z*][a-z0-9_.*-]*$/;
const LOWER_TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const MAX_EXPIRES_IN = 86_400;

/** The derived components (RFC 9421 2.2) a request signature can cover. */
const DERIVED_COMPONENTS = [
  '@method',
  '@target-uri',
  '@authority',
  '@scheme',
  '@request-target',
  '@path',
  '@query',
] as const;

interface SignerWarning {
  code: string;
  field: string;
  message: string;
}

/** Null when `value` fits `format`; never quotes the value (a secret may be in the wrong field). */
export function signerFormatProblem(format: string, value: string): string | null {
  switch (format) {
    case 'key-id':
      return KEY_ID.test(value) ? null : 'may hold only visible ASCII characters other than " and \\ (no space)';
    case 'base64':
      return BASE64.test(value) && value.replace(/=+$/, '').length % 4 !== 1 ? null : 'must be base64';
    case 'aws-scope':
      return AWS_SCOPE.test(value) ? null : 'may hold only lower-case letters, digits and -';
    case 'signature-components':
      return componentsProblem(value);
    case 'signature-label':
      return SIGNATURE_LABEL.test(value)
        ? null
        : 'must be a lower-case letter or *, then lower-case letters, digits, _-.*';
    case 'seconds':
      return /^[1-9][0-9]*$/.test(value) && Number(value) <= MAX_EXPIRES_IN
        ? null
        : `must be a whole number of seconds from 1 to ${MAX_EXPIRES_IN}`;
    default:
      return null;
  }
}

/** Space-separated RFC 9421 component identifiers: the derived ones a request has, or lower-case header names. */
function componentsProblem(value: string): string | null {
  const ids = value.split(' ');
  const derived: readonly string[] = DERIVED_COMPONENTS;
  for (const id of ids) {
    if (id === '') return 'must be component identifiers separated by single spaces';
    if (id.startsWith('@') ? !derived.includes(id) : !LOWER_TOKEN.test(id))
      return `holds a component that is neither ${DERIVED_COMPONENTS.join(', ')} nor a lower-case header name`;
  }
  if (new Set(ids).size !== ids.length) return 'names a component twice';
  // A header a request lacks is left out of its covered list (decision 0122): with only such headers a
  // request could be signed as `sig1=()`, which RFC 9421 allows and which proves nothing about it.
  return ids.some((id) => id.startsWith('@') || id === 'content-digest')
    ? null
    : 'must name a derived component (such as @method) or content-digest, which every request has: ' +
        'headers a request does not carry are left out, and a list of none signs nothing';
}

/** hmac-sha256 signs with `secret`, the other algorithms with `private_key`: the one needed, never the other. */
export function keyChoiceErrors<E>(
  fields: Record<string, unknown>,
  bodyError: (name: string, message: string) => E,
): E[] {
  if (typeof fields.algorithm !== 'string') return [];
  const [needed, refused] = fields.algorithm === 'hmac-sha256' ? ['secret', 'private_key'] : ['private_key', 'secret'];
  const errors: E[] = [];
  if (!Object.prototype.hasOwnProperty.call(fields, needed))
    errors.push(bodyError(`fields.${needed}`, `is required with algorithm ${fields.algorithm}`));
  if (Object.prototype.hasOwnProperty.call(fields, refused))
    errors.push(bodyError(`fields.${refused}`, `is not used with algorithm ${fields.algorithm}; leave it out`));
  return errors;
}

function parsePrivateKey(pem: string): KeyObject | null {
  try {
    return createPrivateKey(pem);
  } catch {
    return null;
  }
}

/** The key types each signing algorithm takes (node:crypto's asymmetricKeyType, and the curve for ECDSA). */
function signingKeyFits(key: KeyObject, algorithm: string): boolean {
  switch (algorithm) {
    case 'rsa':
      return key.asymmetricKeyType === 'rsa';
    case 'rsa-pss-sha512':
      return key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss';
    case 'ed25519':
      return key.asymmetricKeyType === 'ed25519';
    case 'ecdsa-p256-sha256':
      return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
    default:
      return false;
  }
}

/**
 * A signing kind's key as a forward opens it: unencrypted PEM, of a type the algorithm signs with, within the
 * bounds of decision 0144 (a method stored before them is refused here); else why not, after `its private_key`.
 */
export function openSigningKey(pem: string, algorithm: string): KeyObject | string {
  const key = parsePrivateKey(pem);
  if (!key) return 'does not parse as an unencrypted PEM private key';
  if (!signingKeyFits(key, algorithm)) return `is not a key for ${algorithm}`;
  return keyBoundsProblem(key) ?? key;
}

/** The covered components of a stored list (or the default), or why they cannot be signed. */
export function signatureComponents(stored: string | undefined): string[] | string {
  const value = stored ?? DEFAULT_SIGNATURE_COMPONENTS;
  return componentsProblem(value) ?? value.split(' ');
}

export function signingKeyWarnings(pem: string, algorithm: string): SignerWarning[] {
  const key = parsePrivateKey(pem);
  if (!key)
    return [
      {
        code: 'pem-unparseable',
        field: 'private_key',
        message: 'private_key does not parse as an unencrypted PEM private key',
      },
    ];
  if (signingKeyFits(key, algorithm)) return [];
  return [
    {
      code: 'private-key-algorithm-mismatch',
      field: 'private_key',
      message: `a ${key.asymmetricKeyType ?? 'unknown'} key cannot sign with ${algorithm === 'rsa' ? 'RSA-SHA256' : algorithm}`,
    },
  ];
}
