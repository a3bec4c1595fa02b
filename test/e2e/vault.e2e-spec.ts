import { cardNumber, createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { PaymentMethodsService } from '../../src/modules/payments/payment-methods/payment-methods.service';
import { VaultDecryptionError } from '../../src/modules/vault/envelope';
import { KeyRotationService } from '../../src/modules/vault/key-rotation.service';
import {
  PaymentMethodResolver,
  UnknownPaymentMethodError,
} from '../../src/modules/vault/payment-method-resolver.service';
import { parsePaymentMethodIds } from '../../src/modules/forwarding/request/forward-headers';
import { createIsolatedDatabase } from '../support/isolated-database';
import { startTestApp, TEST_MASTER_KEY_1, TEST_MASTER_KEY_2, TestApp } from '../support/test-app';
import { rotationResult } from '../support/rotation';
import { ProblemException } from '../../src/platform/problem/problem';
import { CreatePaymentMethodDto } from '../../src/modules/payments/payment-methods/dto/payment-method.dto';

describe('The vault: encryption at rest, placeholder resolution, key rotation', () => {
  let t: TestApp;
  let merchant: string;

  beforeAll(async () => {
    t = await startTestApp();
    merchant = (await createMerchantAccount(t)).id;
  });
  afterAll(() => t.close());

  const resolver = () => t.get(PaymentMethodResolver);

  it('resolves every placeholder of every listed card, in header order', async () => {
    const visa = cardNumber('4', 16);
    const amex = cardNumber('37', 15);
    const a = await createCard(t, merchant, {
      number: visa,
      expiration_date: '03/31',
      cardholder_name: 'Ada "Countess" Lovelace',
    });
    const b = await createCard(t, merchant, { number: amex, expiration_date: '11/29' });
    const values = await resolver().resolve(merchant, parsePaymentMethodIds(`${b.id}, ${a.id.toUpperCase()}`));
    expect(Object.fromEntries(values)).toEqual({
      CARD_NUMBER_1: amex,
      CARD_EXPIRATION_DATE_1: '11/29',
      CARD_EXPIRATION_DATE_M_1: '11',
      CARD_EXPIRATION_DATE_MM_1: '11',
      CARD_EXPIRATION_DATE_YY_1: '29',
      CARD_EXPIRATION_DATE_YYYY_1: '2029',
      CARDHOLDER_NAME_1: '',
      CARD_NUMBER_2: visa,
      CARD_EXPIRATION_DATE_2: '03/31',
      CARD_EXPIRATION_DATE_M_2: '3',
      CARD_EXPIRATION_DATE_MM_2: '03',
      CARD_EXPIRATION_DATE_YY_2: '31',
      CARD_EXPIRATION_DATE_YYYY_2: '2031',
      CARDHOLDER_NAME_2: 'Ada "Countess" Lovelace',
    });
  });

  it('names the position of an unknown, deleted or other merchant’s payment method', async () => {
    const mine = await createCard(t, merchant);
    const other = await createCard(t, (await createMerchantAccount(t)).id);
    const gone = await createCard(t, merchant);
    await t.get(PaymentMethodsService).delete(merchant, gone.id);
    for (const [ids, position] of [
      [[mine.id, other.id], 2],
      [[gone.id], 1],
      [[mine.id, '00000000-0000-4000-8000-000000000000'], 2],
    ] as Array<[string[], number]>) {
      const error = await resolver()
        .resolve(merchant, ids)
        .catch((e: unknown) => e);
      // The vault names the position; forwarding turns it into 400 unknown-payment-method naming its header.
      expect(error).toBeInstanceOf(UnknownPaymentMethodError);
      expect((error as UnknownPaymentMethodError).position).toBe(position);
      expect((error as Error).message).toContain(`position ${position}`);
    }
  });

  it.each([
    ['', 'position 1 is empty'],
    ['not-a-uuid', 'position 1 is not a UUID'],
    ['00000000-0000-4000-8000-000000000000,,00000000-0000-4000-8000-000000000001', 'position 2 is empty'],
    ['00000000-0000-4000-8000-000000000000;00000000-0000-4000-8000-000000000001', 'position 1 is not a UUID'],
    ['00000000-0000-4000-8000-000000000000,00000000-0000-4000-8000-000000000000', 'position 2 repeats position 1'],
    [
      Array.from({ length: 101 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`).join(','),
      'at most 100',
    ],
  ])('refuses the header %p', (raw, message) => {
    expect(() => parsePaymentMethodIds(raw)).toThrow(ProblemException);
    try {
      parsePaymentMethodIds(raw);
    } catch (error) {
      expect((error as ProblemException).detail).toContain(message);
    }
  });

  it('stores no card number, nor its last 12 digits, nor the cardholder name in any column', async () => {
    const number = cardNumber('4', 19);
    const pm = await createCard(t, merchant, { number, cardholder_name: 'Grace Hopper' });
    const rows: Array<{ row: string }> = await t.db.query(
      `SELECT row_to_json(p)::text AS row FROM payment_methods p WHERE id = $1
       UNION ALL SELECT row_to_json(k)::text FROM vault_merchant_keys k WHERE merchant_account_id = $2`,
      [pm.id, merchant],
    );
    expect(rows).toHaveLength(2);
    const text = rows.map((r) => r.row).join('\n');
    expect(text).toContain(number.slice(-4)); // the label is allowed
    expect(text).not.toContain(number.slice(-12));
    expect(text).not.toContain('Grace Hopper');
    // bytea also as raw bytes, not only as hex text.
    const [raw] = await t.db.query('SELECT ciphertext, wrapped_key FROM payment_methods WHERE id = $1', [pm.id]);
    for (const blob of [raw.ciphertext, raw.wrapped_key] as Buffer[]) {
      expect(blob.includes(Buffer.from(number.slice(-12)))).toBe(false);
      expect(blob.includes(Buffer.from('Grace Hopper'))).toBe(false);
    }
  });

  it('a ciphertext moved onto another row, or another merchant’s row, fails to decrypt with a clear error', async () => {
    const source = await createCard(t, merchant);
    const sameMerchant = await createCard(t, merchant);
    const otherMerchant = (await createMerchantAccount(t)).id;
    const foreign = await createCard(t, otherMerchant);
    for (const [target, targetMerchant] of [
      [sameMerchant.id, merchant],
      [foreign.id, otherMerchant],
    ]) {
      await t.db.query(
        `UPDATE payment_methods t SET ciphertext = s.ciphertext, wrapped_key = s.wrapped_key, master_key_id = s.master_key_id
           FROM payment_methods s WHERE s.id = $1 AND t.id = $2`,
        [source.id, target],
      );
      const error = await resolver()
        .resolve(targetMerchant, [target])
        .catch((e: ProblemException) => e.cause);
      expect(error).toBeInstanceOf(VaultDecryptionError);
      expect((error as Error).message).toBe(
        `payment method ${target}: the data key does not authenticate for this record (moved, tampered or wrong master key)`,
      );
    }
    // The source itself still decrypts.
    expect((await resolver().resolve(merchant, [source.id])).get('CARD_NUMBER_1')).toMatch(/^\d{16}$/);
  });

  it('rotates a few thousand cards to a new master key, then resolves every one of them', async () => {
    // Rotation re-wraps every row of its database, so it runs on a database of its own: in the run's
    // shared one it would move other test files' cards to a key their apps do not hold.
    const own = await createIsolatedDatabase('rotation');
    const base = await startTestApp({ env: { DATABASE_URL: own.url } });
    try {
      await rotateOnOwnDatabase(own.url, base);
    } finally {
      await base.close();
      await own.drop();
    }
  });

  async function rotateOnOwnDatabase(url: string, t: TestApp): Promise<void> {
    const resolver = () => t.get(PaymentMethodResolver);
    const rotating = (await createMerchantAccount(t)).id;
    const service = t.get(PaymentMethodsService);
    const numbers = new Map<string, string>();
    const COUNT = 2500;
    for (let i = 0; i < COUNT; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const number = cardNumber('4', 16);
          const input = Object.assign(new CreatePaymentMethodDto(), {
            method: 'card',
            number,
            expiration_date: '10/32',
            cardholder_name: `Holder ${i}`,
          });
          return [(await service.create(rotating, input)).id, number] as const;
        }),
      );
      for (const [id, number] of batch) numbers.set(id, number);
    }
    // One row of this merchant is tampered with (another row's ciphertext moved onto it).
    const [tampered, donor] = [...numbers.keys()].slice(-2);
    await t.db.query(
      `UPDATE payment_methods t SET ciphertext = s.ciphertext, wrapped_key = s.wrapped_key FROM payment_methods ` +
        `s WHERE s.id = $1 AND t.id = $2`,
      [donor, tampered],
    );
    numbers.delete(tampered);
    const fingerprintBefore = (
      await t.db.query('SELECT fingerprint FROM payment_methods WHERE id = $1', [[...numbers.keys()][0]])
    )[0].fingerprint;

    // Deploy step 1: the new key first (current), the old one still listed. Rotate, twice: resumable and idempotent.
    const both = await startTestApp({
      env: { DATABASE_URL: url, VAULT_MASTER_KEYS: `${TEST_MASTER_KEY_2},${TEST_MASTER_KEY_1}` },
    });
    try {
      const first = await both.get(KeyRotationService).rotate(300);
      expect(first).toEqual(
        rotationResult({
          rewrapped_payment_methods: COUNT - 1,
          rewrapped_merchant_keys: 1,
          failed_payment_methods: [tampered],
          remaining: 1,
        }),
      );
      const second = await both.get(KeyRotationService).rotate(300);
      expect(second).toMatchObject({
        master_key_id: 'test-k2',
        rewrapped_payment_methods: 0,
        rewrapped_merchant_keys: 0,
      });
      expect(second.failed_payment_methods).toEqual(first.failed_payment_methods);
    } finally {
      await both.close();
    }
    const left: Array<{ id: string }> = await t.db.query(
      `SELECT id FROM payment_methods WHERE merchant_account_id = $1 AND master_key_id <> 'test-k2'`,
      [rotating],
    );
    expect(left.map((r) => r.id)).toEqual([tampered]);

    // Deploy step 2: the old key is gone; every card still resolves, and fingerprints have not moved.
    const onlyNew = await startTestApp({ env: { DATABASE_URL: url, VAULT_MASTER_KEYS: TEST_MASTER_KEY_2 } });
    try {
      const ids = [...numbers.keys()];
      for (let i = 0; i < ids.length; i += 100) {
        const chunk = ids.slice(i, i + 100);
        const values = await onlyNew.get(PaymentMethodResolver).resolve(rotating, chunk);
        chunk.forEach((id, index) => expect(values.get(`CARD_NUMBER_${index + 1}`)).toBe(numbers.get(id)));
      }
      const again = await createCard(onlyNew, rotating, { number: numbers.get(ids[0])! });
      expect(again.fingerprint).toBe(fingerprintBefore);
    } finally {
      await onlyNew.close();
    }
    // And the app that only knows the old key now fails clearly instead of returning garbage.
    const error = await resolver()
      .resolve(rotating, [[...numbers.keys()][0]])
      .catch((e: ProblemException) => e.cause);
    expect((error as Error).message).toMatch(/wrapped by master key "test-k2", which VAULT_MASTER_KEYS does not hold/);
  }
});
