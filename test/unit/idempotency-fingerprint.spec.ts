import { createHash } from 'node:crypto';
import { requestFingerprint } from '../../src/modules/forwarding/idempotency/idempotency.service';

/** The fingerprint as docs/decisions.md describes it, written again: each part as `<byte length>:<bytes>`. */
function expected(parts: Array<string | Buffer>): Buffer {
  const hash = createHash('sha256');
  for (const part of parts) {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
    hash.update(`${bytes.length}:`).update(bytes);
  }
  return hash.digest();
}

describe('Idempotency-Key request fingerprint', () => {
  const body = Buffer.from('{"n":"{{ CARD_NUMBER_1 }}","é":1}');

  it('hashes merchant, key, kind, the shaping headers by name (x-vault-forward-*, content-type) and the body, each length-prefixed', () => {
    const fingerprint = requestFingerprint({
      merchantAccountId: 'merchant-1',
      key: 'key-1',
      kind: 'sync',
      headers: {
        'x-vault-forward-url': 'https://psp.example/pay?q=é',
        'content-type': 'application/json',
        'x-vault-forward-payment-methods': ['pm-1', 'pm-2'],
        authorization: 'Bearer not-part-of-it',
        'x-request-id': 'not-part-of-it',
        'content-length': '31',
      },
      body,
    });
    expect(fingerprint).toEqual(
      expected([
        'merchant-1',
        'key-1',
        'sync',
        'content-type',
        'application/json',
        'x-vault-forward-payment-methods',
        'pm-1\npm-2',
        'x-vault-forward-url',
        'https://psp.example/pay?q=é',
        body,
      ]),
    );
  });

  it('length prefixes keep parts apart: moving a character between merchant and key changes it', () => {
    const of = (merchantAccountId: string, key: string) =>
      requestFingerprint({ merchantAccountId, key, kind: 'sync', headers: {}, body: Buffer.alloc(0) });
    expect(of('ab', 'c')).not.toEqual(of('a', 'bc'));
    expect(of('ab', 'c')).toEqual(of('ab', 'c'));
  });
});
