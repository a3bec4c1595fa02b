import { createECDH, createPrivateKey, createPublicKey, KeyObject, sign } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { readOrCreateDevSecret } from '../../../platform/config/dev-secret';
import { Pkcs11Token } from '../../vault/pkcs11-keyring';
import { Pkcs11SigningKey } from '../../vault/pkcs11-signing-key';
import { ledgerKeyId } from './ledger-documents';

/**
 * The key that signs tree heads, kept as the vault's master keys are: LEDGER_SIGNING_KEY(_FILE), or a key pair in
 * the vault's PKCS#11 token (LEDGER_PKCS11_KEY_LABEL) that signs without leaving it; for development, a P-256 key
 * derived from a random secret kept in DATA_DIR (shared by the processes of one machine). Signing is node:crypto's
 * (OpenSSL's) ECDSA or the token's CKM_ECDSA, r || s either way; only the public key leaves this class.
 */
export class LedgerKey {
  readonly keyId: string;

  private constructor(
    readonly publicKey: KeyObject,
    private readonly signer: (bytes: Buffer) => Buffer,
  ) {
    this.keyId = ledgerKeyId(publicKey);
  }

  static fromConfig(config: Pick<AppConfig, 'ledger' | 'dataDir' | 'vaultPkcs11'>): LedgerKey {
    const label = config.ledger.pkcs11KeyLabel;
    if (label !== null) {
      const key = new Pkcs11SigningKey(new Pkcs11Token({ ...config.vaultPkcs11!, dataKeyCacheSize: 0 }), label);
      return new LedgerKey(key.publicKey, (bytes) => key.sign(bytes));
    }
    const privateKey = config.ledger.signingKey ?? developmentKey(config.dataDir);
    return new LedgerKey(createPublicKey(privateKey), (bytes) =>
      sign('sha256', bytes, { key: privateKey, dsaEncoding: 'ieee-p1363' }),
    );
  }

  /** ECDSA P-256 / SHA-256, r || s, base64. */
  sign(bytes: Buffer): string {
    return this.signer(bytes).toString('base64');
  }

  publicKeyPem(): string {
    return this.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  }
}

function developmentKey(dataDir: string): KeyObject {
  const { secret, file, created } = readOrCreateDevSecret(dataDir, 'ledger-signing-key');
  if (created)
    new Logger('Ledger').warn(
      `No LEDGER_SIGNING_KEY: generated a development ledger key in ${file}; set one in production.`,
    );
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(secret);
  const point = ecdh.getPublicKey();
  const b64url = (bytes: Buffer) => bytes.toString('base64url');
  return createPrivateKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      d: b64url(secret),
      x: b64url(point.subarray(1, 33)),
      y: b64url(point.subarray(33)),
    },
    format: 'jwk',
  });
}
