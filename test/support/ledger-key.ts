import { createECDH, createPrivateKey } from 'node:crypto';

/** A fixed test ledger key (ECDSA P-256 from the scalar 7…7), so every process of the run signs heads alike. */
export const TEST_LEDGER_KEY = (() => {
  const scalar = Buffer.alloc(32, 7);
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(scalar);
  const point = ecdh.getPublicKey();
  const jwk = {
    kty: 'EC',
    crv: 'P-256',
    d: scalar.toString('base64url'),
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33).toString('base64url'),
  };
  return createPrivateKey({ key: jwk, format: 'jwk' }).export({ type: 'pkcs8', format: 'pem' }).toString();
})();
