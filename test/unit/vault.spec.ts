import { randomBytes } from 'node:crypto';
import { luhnValid } from '../../src/platform/card-data/card-numbers';
import { cardNumberProblem, normaliseCardNumber, parseExpirationDate, schemeOf } from '../../src/modules/vault/card';
import {
  open,
  openPart,
  rewrap,
  seal,
  sealPart,
  sealParts,
  unwrapSecret,
  VaultDecryptionError,
  wrapSecret,
} from '../../src/modules/vault/envelope';
import { EnvMasterKey, VaultKeyring } from '../../src/modules/vault/keyring';
import { randomBytesFromPool } from '../../src/modules/vault/crypto/random-pool';
import { SecretSealer } from '../../src/modules/vault/secret-sealer';
import { PlaceholderError, scanText } from '../../src/modules/vault/placeholders/placeholders';
import { fillBody, fillHeaderValue } from '../support/placeholder-fill';

describe('card rules', () => {
  it('normalises spaces and dashes, refuses anything else', () => {
    expect(normaliseCardNumber('4111 1111-1111 1111')).toBe('4111111111111111');
    expect(normaliseCardNumber('4111x111')).toBeNull();
  });

  it.each([
    ['4111111111111111', null],
    ['4111111111111112', 'fails the Luhn check'],
    ['41111111111', 'must have 12 to 19 digits'],
    ['41111111111111111111', 'must have 12 to 19 digits'],
    ['4111abcd11111111', 'must contain only digits (spaces and dashes are ignored)'],
    [4111111111111111, 'must be a string of digits'],
  ])('%p → %p, never echoing the number', (input, problem) => {
    expect(cardNumberProblem(input)).toBe(problem);
    if (problem) expect(problem).not.toMatch(/\d{4}/);
  });

  it('Luhn', () => {
    expect(luhnValid('79927398713')).toBe(true);
    expect(luhnValid('79927398710')).toBe(false);
  });

  it.each([
    ['4111111111111111', 'visa'],
    ['5555555555554444', 'mastercard'],
    ['2223003122003222', 'mastercard'],
    ['378282246310005', 'amex'],
    ['6011111111111117', 'discover'],
    // 622126–622925: cards UnionPay issues that Discover's network also accepts; the issuer's scheme.
    ['6221260000000000', 'unionpay'],
    ['3530111333300000', 'jcb'],
    ['30569309025904', 'diners'],
    ['36227206271667', 'diners'],
    ['6200000000000005', 'unionpay'],
    ['6759649826438453', 'maestro'],
    ['9999999999999995', 'unknown'],
  ])('scheme of %s is %s', (number, scheme) => expect(schemeOf(number)).toBe(scheme));

  it('parses MM/YY', () => {
    expect(parseExpirationDate('03/31')).toEqual({ month: 3, year: 2031 });
    expect(parseExpirationDate('13/31')).toBeNull();
    expect(parseExpirationDate('00/31')).toBeNull();
    expect(parseExpirationDate('3/31')).toBeNull();
  });
});

describe('envelope encryption', () => {
  const raw2 = randomBytes(32);
  const k1 = new EnvMasterKey('k1', randomBytes(32));
  const k2 = new EnvMasterKey('k2', raw2);
  const secret = Buffer.from('{"n":"4111111111111111"}');

  it('round-trips, and the ciphertext does not contain the plaintext', () => {
    const sealed = seal(secret, 'aad-a', k1);
    expect(sealed.masterKeyId).toBe('k1');
    expect(sealed.ciphertext.includes(Buffer.from('4111111111111111'))).toBe(false);
    expect(open(sealed, 'aad-a', new VaultKeyring([k1]), 'pm').toString()).toBe(secret.toString());
  });

  it('fails on another record’s AAD, a flipped bit, or a missing master key', () => {
    const sealed = seal(secret, 'aad-a', k1);
    expect(() => open(sealed, 'aad-b', new VaultKeyring([k1]), 'pm b')).toThrow(VaultDecryptionError);
    const flipped = Buffer.from(sealed.ciphertext);
    flipped[flipped.length - 1] ^= 1;
    expect(() => open({ ...sealed, ciphertext: flipped }, 'aad-a', new VaultKeyring([k1]), 'pm')).toThrow(
      /does not authenticate/,
    );
    expect(() => open(sealed, 'aad-a', new VaultKeyring([k2]), 'pm')).toThrow(
      /"k1", which VAULT_MASTER_KEYS does not hold/,
    );
  });

  it('refuses a blob whose format version is not ours, even if everything else authenticates', () => {
    // The version byte is outside what GCM authenticates: only the explicit check refuses it.
    const sealed = seal(secret, 'aad-a', k1);
    const otherVersion = Buffer.from(sealed.ciphertext);
    otherVersion[0] = 2;
    expect(() => open({ ...sealed, ciphertext: otherVersion }, 'aad-a', new VaultKeyring([k1]), 'pm')).toThrow(
      /ciphertext does not authenticate/,
    );
    const wrapVersion = Buffer.from(sealed.wrappedKey);
    wrapVersion[0] = 0;
    expect(() => open({ ...sealed, wrappedKey: wrapVersion }, 'aad-a', new VaultKeyring([k1]), 'pm')).toThrow(
      /data key does not authenticate/,
    );
  });

  it('binds the wrapped data key to its record: a data key moved from another record fails at unwrapping', () => {
    const a = seal(secret, 'aad-a', k1);
    const b = seal(secret, 'aad-b', k1);
    expect(() => open({ ...a, wrappedKey: b.wrappedKey }, 'aad-a', new VaultKeyring([k1]), 'pm a')).toThrow(
      /pm a: the data key does not authenticate/,
    );
  });

  it('wraps a bare secret under a master key, bound to its AAD and key id', () => {
    const fingerprintKey = randomBytes(32);
    const wrapped = wrapSecret(fingerprintKey, 'merchant-m', k1);
    expect(wrapped.includes(fingerprintKey)).toBe(false);
    expect(unwrapSecret(wrapped, 'k1', 'merchant-m', new VaultKeyring([k1]), 'm').equals(fingerprintKey)).toBe(true);
    expect(() => unwrapSecret(wrapped, 'k1', 'merchant-n', new VaultKeyring([k1]), 'm')).toThrow(
      /data key does not authenticate/,
    );
    expect(() => unwrapSecret(wrapped, 'k1', 'merchant-m', new VaultKeyring([{ id: 'k1', key: raw2 }]), 'm')).toThrow(
      VaultDecryptionError,
    );
  });

  it('rewraps under a new master key without touching the ciphertext', () => {
    const sealed = seal(secret, 'aad-a', k1);
    const both = new VaultKeyring([k2, k1]);
    const wrappedKey = rewrap(sealed, 'aad-a', both, k2, 'pm');
    const moved = { ciphertext: sealed.ciphertext, wrappedKey, masterKeyId: 'k2' };
    expect(open(moved, 'aad-a', new VaultKeyring([k2]), 'pm').toString()).toBe(secret.toString());
  });

  it('seals one more part under an existing record’s data key; it opens after a rewrap, bound to its name and AAD', () => {
    // A checkout session's 3-D Secure values join its card's envelope later (decision 0101).
    const record = sealParts({ card: Buffer.from('4111111111111111') }, 'aad-s', k1);
    const keyring = new VaultKeyring([k1]);
    const part = sealPart(record, 'three-d-secure', Buffer.from('{"eci":"05"}'), 'aad-s', keyring, 'session');
    expect(part.includes(Buffer.from('"05"'))).toBe(false);
    const both = new VaultKeyring([k2, k1]);
    const moved = { wrappedKey: rewrap(record, 'aad-s', both, k2, 'session'), masterKeyId: 'k2' };
    const onlyNew = new VaultKeyring([k2]);
    expect(openPart(moved, 'three-d-secure', part, 'aad-s', onlyNew, 'session').toString()).toBe('{"eci":"05"}');
    expect(openPart(moved, 'card', record.parts.card!, 'aad-s', onlyNew, 'session').toString()).toBe(
      '4111111111111111',
    );
    expect(() => openPart(moved, 'card', part, 'aad-s', onlyNew, 'session')).toThrow(VaultDecryptionError);
    expect(() => sealPart(record, 'x', Buffer.from('y'), 'aad-t', keyring, 'session')).toThrow(VaultDecryptionError);
  });
});

describe("the sealer's text forms (the one place a sealed value becomes text)", () => {
  const k1 = new EnvMasterKey('k1', randomBytes(32));
  const keyring = new VaultKeyring([k1]);
  const sealer = new SecretSealer(keyring);
  const value = { accessToken: 'at-1', refreshAtMs: 1_800_000_000_000 };

  it('sealText is one JSON string {k, w, c} of base64 parts, as Redis holds it; openText opens it', () => {
    const text = sealer.sealText('aad-t', value);
    const { k, w, c } = JSON.parse(text) as { k: string; w: string; c: string };
    expect(k).toBe('k1');
    const record = { masterKeyId: k, wrappedKey: Buffer.from(w, 'base64'), ciphertext: Buffer.from(c, 'base64') };
    expect(JSON.parse(open(record, 'aad-t', keyring, 't').toString())).toEqual(value);
    expect(sealer.openText('aad-t', text, 't')).toEqual(value);
    expect(() => sealer.openText('aad-u', text, 't')).toThrow(VaultDecryptionError);
    expect(() => sealer.openText('aad-t', '{"k":"k1"}', 't')).toThrow(VaultDecryptionError);
    expect(() => sealer.openText('aad-t', 'not json', 't')).toThrow(SyntaxError);
  });

  it('sealJsonText gives the three columns as base64, which decode to a record that opens', () => {
    const parts = sealer.sealJsonText('aad-c', value);
    const record = {
      masterKeyId: parts.masterKeyId,
      wrappedKey: Buffer.from(parts.wrappedKey, 'base64'),
      ciphertext: Buffer.from(parts.ciphertext, 'base64'),
    };
    expect(sealer.openJson('aad-c', record, 'c')).toEqual(value);
  });
});

describe('random bytes from the pool (decision 0111)', () => {
  it('hands out each byte once, across refills, in buffers of their own', () => {
    // 12 × 1,000 bytes crosses the 4 KiB pool's refill twice; any repeat or overlap shows as a duplicate.
    const drawn = Array.from({ length: 1_000 }, (_, i) => randomBytesFromPool(i % 2 ? 12 : 32));
    expect(new Set(drawn.map((b) => b.toString('hex'))).size).toBe(drawn.length);
    for (const [i, bytes] of drawn.entries()) {
      expect(bytes.length).toBe(i % 2 ? 12 : 32);
      // Its own memory: zeroing a data key after use touches nothing else.
      expect(bytes.buffer.byteLength).toBe(bytes.length);
    }
    drawn[0].fill(0);
    expect(drawn[2].equals(Buffer.alloc(32))).toBe(false);
  });

  it('looks random: every byte value turns up, none far more often than the rest', () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 2_000; i++) for (const byte of randomBytesFromPool(32)) counts[byte]++;
    // 64,000 bytes, 250 expected per value: a stuck or zeroed pool fails by far.
    expect(Math.min(...counts)).toBeGreaterThan(150);
    expect(Math.max(...counts)).toBeLessThan(350);
  });

  it('gives a large request its own draw', () => {
    expect(randomBytesFromPool(8_192)).toHaveLength(8_192);
  });
});

describe('placeholders', () => {
  it('finds {{ NAME_X }} and {{NAME_X}}, skipping escaped ones and non-placeholders', () => {
    const text =
      '{"a":"{{ CARD_NUMBER_1 }}","b":"{{CARD_EXPIRATION_DATE_2}}","c":"\\{{ CARD_NUMBER_1 }}","d":"{{ lower_1 }}","e":{"f":{}}}';
    expect(scanText(text, 2).uses.map((u) => [u.name, u.position])).toEqual([
      ['CARD_NUMBER', 1],
      ['CARD_EXPIRATION_DATE', 2],
    ]);
  });

  it('refuses unknown names and out-of-range positions, naming the token', () => {
    expect(() => scanText('{{ CARD_NUMBR_1 }}', 1)).toThrow(PlaceholderError);
    expect(() => scanText('{{ CARD_NUMBR_1 }}', 1)).toThrow('CARD_NUMBR_1');
    expect(() => scanText('{{ CARD_NUMBER_2 }}', 1)).toThrow('position 2');
    expect(() => scanText('{{ CARD_NUMBER_0 }}', 1)).toThrow('position 0');
    expect(() => scanText('{{ CARD_NUMBER_1 }}', 0)).toThrow('lists no payment method');
  });

  it('substitutes, unescapes, and JSON-escapes when asked', () => {
    const values = new Map([['CARDHOLDER_NAME_1', 'O"Brien \\ </x>']]);
    expect(fillBody('{"n":"{{ CARDHOLDER_NAME_1 }}"}', values, 'json')).toBe('{"n":"O\\"Brien \\\\ </x>"}');
    expect(JSON.parse(fillBody('{"n":"{{ CARDHOLDER_NAME_1 }}"}', values, 'json')).n).toBe('O"Brien \\ </x>');
    expect(fillHeaderValue('x \\{{ CARDHOLDER_NAME_1 }} y', values)).toBe('x {{ CARDHOLDER_NAME_1 }} y');
    expect(fillBody('x \\{{ CARDHOLDER_NAME_1 }} y', values)).toBe('x {{ CARDHOLDER_NAME_1 }} y');
    // In JSON the escape is an escaped backslash, and the result stays valid JSON.
    const json = '{"literal":"\\\\{{ CARD_NUMBER_1 }}"}';
    expect(scanText(json, 0, 'json').uses).toEqual([]);
    expect(JSON.parse(fillBody(json, values, 'json'))).toEqual({
      literal: '{{ CARD_NUMBER_1 }}',
    });
  });
});
