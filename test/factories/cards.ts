import { randomInt } from 'node:crypto';
import { luhnValid } from '../../src/platform/card-data/card-numbers';
import { PaymentMethodsService } from '../../src/modules/payments/payment-methods/payment-methods.service';
import { PaymentMethod } from '../../src/modules/payments/payment-methods/payment-method.entity';
import { CreatePaymentMethodDto } from '../../src/modules/payments/payment-methods/dto/payment-method.dto';
import type { TestApp } from '../support/test-app';

/** A random Luhn-valid number with the given prefix and length (random, so no two tests share a card). */
export function cardNumber(prefix = '4', length = 16): string {
  let body = prefix;
  while (body.length < length - 1) body += String(randomInt(10));
  for (let check = 0; check < 10; check++) {
    if (luhnValid(body + check)) return body + check;
  }
  throw new Error('unreachable');
}

/** Stores a card through the real service (encryption and fingerprint included). */
export function createCard(
  t: TestApp,
  merchantAccountId: string,
  overrides: Partial<CreatePaymentMethodDto> = {},
): Promise<PaymentMethod> {
  const input = Object.assign(new CreatePaymentMethodDto(), {
    method: 'card',
    number: cardNumber(),
    expiration_date: '12/30',
    ...overrides,
  });
  return t.get(PaymentMethodsService).create(merchantAccountId, input);
}

export interface StoredCard {
  id: string;
  number: string;
}

/** A card stored as `createCard` does, with its number kept for the test to look for (random unless given). */
export async function storeCard(
  t: TestApp,
  merchantAccountId: string,
  overrides: Partial<CreatePaymentMethodDto> = {},
): Promise<StoredCard> {
  const number = overrides.number ?? cardNumber();
  return { id: (await createCard(t, merchantAccountId, { ...overrides, number })).id, number };
}
