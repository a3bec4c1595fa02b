import { createHash, createPublicKey, KeyObject } from 'node:crypto';
import * as pkcs11js from 'pkcs11js';
import { Pkcs11Token } from './pkcs11-keyring';

/** DER of the P-256 curve's OID (1.2.840.10045.3.1.7): CKA_EC_PARAMS of a key pair on it. */
const P256 = Buffer.from('06082a8648ce3d030107', 'hex');

/**
 * An ECDSA P-256 key pair in the vault's PKCS#11 token (LEDGER_PKCS11_KEY_LABEL: what signs the disclosure
 * ledger's heads, decision 0133). The private key is sensitive and never extractable: the token signs the SHA-256
 * digest with CKM_ECDSA, whose output is r || s, the IEEE P1363 form node:crypto verifies with
 * `dsaEncoding: 'ieee-p1363'`. The public key is read from the token's public key object of the same label.
 */
export class Pkcs11SigningKey {
  readonly publicKey: KeyObject;

  constructor(
    private readonly token: Pkcs11Token,
    private readonly label: string,
  ) {
    // Through run(): the private key must be there too, and a token away at start-up is retried as a signature is.
    this.publicKey = token.run(
      label,
      'sign',
      (m, session) => publicKeyOf(m, session, token, label),
      pkcs11js.CKO_PRIVATE_KEY,
    );
  }

  /** r || s (64 bytes) over SHA-256(data). */
  sign(data: Buffer): Buffer {
    const digest = createHash('sha256').update(data).digest();
    return this.token.run(
      this.label,
      'sign',
      (m, session, key) => {
        m.C_SignInit(session, { mechanism: pkcs11js.CKM_ECDSA }, key);
        return m.C_Sign(session, digest, Buffer.alloc(64));
      },
      pkcs11js.CKO_PRIVATE_KEY,
    );
  }

  /** Makes the key pair (the CLI's `ledger key create`): private key sensitive, never extractable, sign only. */
  static create(token: Pkcs11Token, label: string): KeyObject {
    const module = token.open(true);
    if (token.find(label, pkcs11js.CKO_PRIVATE_KEY).length > 0)
      throw new Error(`token "${token.config.tokenLabel}" already holds a key labelled "${label}"`);
    const session = token.session!;
    module.C_GenerateKeyPair(
      session,
      { mechanism: pkcs11js.CKM_EC_KEY_PAIR_GEN },
      [
        { type: pkcs11js.CKA_TOKEN, value: true },
        { type: pkcs11js.CKA_LABEL, value: label },
        { type: pkcs11js.CKA_EC_PARAMS, value: P256 },
        { type: pkcs11js.CKA_VERIFY, value: true },
      ],
      [
        { type: pkcs11js.CKA_TOKEN, value: true },
        { type: pkcs11js.CKA_LABEL, value: label },
        { type: pkcs11js.CKA_PRIVATE, value: true },
        { type: pkcs11js.CKA_SENSITIVE, value: true },
        { type: pkcs11js.CKA_EXTRACTABLE, value: false },
        { type: pkcs11js.CKA_SIGN, value: true },
      ],
    );
    return publicKeyOf(module, session, token, label);
  }
}

/** The public key object's CKA_EC_POINT (a DER OCTET STRING around the uncompressed point) as a KeyObject. */
function publicKeyOf(m: pkcs11js.PKCS11, session: Buffer, token: Pkcs11Token, label: string): KeyObject {
  const [handle] = token.find(label, pkcs11js.CKO_PUBLIC_KEY);
  if (!handle) throw new Error(`token "${token.config.tokenLabel}" holds no public key labelled "${label}"`);
  const [{ value }] = m.C_GetAttributeValue(session, handle, [{ type: pkcs11js.CKA_EC_POINT }]);
  const der = value;
  const point = der[0] === 0x04 && der[1] === der.length - 2 ? der.subarray(2) : der;
  if (point.length !== 65 || point[0] !== 0x04) throw new Error(`key "${label}" is not an uncompressed P-256 point`);
  return createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33).toString('base64url'),
    },
    format: 'jwk',
  });
}
