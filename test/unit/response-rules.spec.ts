import { holdsCardNumber, maskCardNumbers } from '../../src/platform/card-data/card-numbers';
import { parseJsonExactly } from '../../src/modules/forwarding/answers/json-text';
import { applyRules, maskValue, normaliseExpiry } from '../../src/modules/forwarding/answers/response-rules-engine';
import {
  compileResponseRules,
  parsePath,
  ResponseRuleInput,
} from '../../src/modules/forwarding-setup/configs/response-rules';
import { digitRuns, MIB, ruleAnswer } from '../support/hostile-inputs';

const VISA = '4111111111111111';
const AMEX = '378282246310005';

const rules = (...input: ResponseRuleInput[]) => compileResponseRules(input);

describe('response rule paths (decisions/0097)', () => {
  it.each([
    ['$.card.number', [{ name: 'card' }, { name: 'number' }]],
    ['$.cards[*].pan', [{ name: 'cards' }, { any: true }, { name: 'pan' }]],
    ['$[0].a-b_c', [{ index: 0 }, { name: 'a-b_c' }]],
  ])('%s parses', (path, segments) => expect(parsePath(path)).toEqual(segments));

  it.each([
    'card',
    '$',
    '$..a',
    '$.a[01]',
    '$.a[-1]',
    '$.a[?(@)]',
    '$.a.',
    `$${'.a'.repeat(33)}`,
    `$.${'a'.repeat(200)}`,
  ])('%s is refused with a reason', (path) => expect(typeof parsePath(path)).toBe('string'));
});

describe('applyRules', () => {
  it('tokenize finds each card with the expiry and name at the same [*] index', () => {
    const answer = {
      cards: [
        { n: VISA, e: '12/2030', h: 'Ada' },
        { n: AMEX, e: '2031-04', h: 'Bob' },
        { n: null, e: '01/30' },
      ],
    };
    const found = applyRules(
      answer,
      rules({
        match: '$.cards[*].n',
        action: 'tokenize',
        expiration_date: '$.cards[*].e',
        cardholder_name: '$.cards[*].h',
      }),
    );
    expect(
      found.cards.map(({ number, expirationDate, cardholderName }) => [number, expirationDate, cardholderName]),
    ).toEqual([
      [VISA, '12/30', 'Ada'],
      [AMEX, '04/31', 'Bob'],
    ]);
    found.cards.forEach((card, i) => card.put(`id-${i}`));
    expect(answer.cards.map((c) => c.n)).toEqual(['id-0', 'id-1', null]);
  });

  it('remove deletes members and array elements (compacted once), mask keeps BIN and last four', () => {
    const answer = { a: [1, 2, 3, 4], b: { pan: VISA, keep: true }, c: { pan: 4111111111111111 } };
    const found = applyRules(
      answer,
      rules(
        { match: '$.a[*]', action: 'remove' },
        { match: '$.b.pan', action: 'mask' },
        { match: '$.c', action: 'remove' },
      ),
    );
    expect(found.changed).toBe(true);
    expect(answer).toEqual({ a: [], b: { pan: '411111******1111', keep: true } });
  });

  it('a rule that matches nothing changes nothing', () => {
    const answer = { a: { b: 1 } };
    expect(
      applyRules(answer, rules({ match: '$.a.c', action: 'remove' }, { match: '$.x[3]', action: 'mask' })).changed,
    ).toBe(false);
    expect(answer).toEqual({ a: { b: 1 } });
  });

  it('a tokenize rule on a value that is no card number fails naming the rule', () => {
    expect(() => applyRules({ a: { n: '4111111111111112' } }, rules({ match: '$.a.n', action: 'tokenize' }))).toThrow(
      'the value it matched is not a card number',
    );
  });
});

describe('masking and finding card numbers', () => {
  it.each([
    [VISA, '411111******1111'],
    [AMEX, '378282*****0005'],
    ['4111-1111-1111-1111', '4111-11**-****-1111'],
    ['4222222222222', '*********2222'],
    ['12345', '*****'],
  ])('maskValue(%s) is %s', (value, masked) => expect(maskValue(value)).toBe(masked));

  it('finds only Luhn-valid 12–19 digit runs with no digit beside them', () => {
    expect(holdsCardNumber(`x${VISA}y`)).toBe(true);
    expect(holdsCardNumber(`1${VISA}`)).toBe(false); // 17 digits, Luhn fails
    expect(holdsCardNumber('4111111111111112')).toBe(false);
    expect(holdsCardNumber('1'.repeat(25))).toBe(false);
    expect(maskCardNumbers(`a ${VISA} b 4111111111111112`)).toBe('a 411111******1111 b 4111111111111112');
  });

  it('a rule reads and writes back an integer JSON cannot hold exactly, digit for digit', () => {
    const root = parseJsonExactly('{"pan":6212345678901234569,"other":6212345678901234569}');
    applyRules(root, rules({ match: '$.pan', action: 'mask' }));
    expect(JSON.stringify(root)).toBe('{"pan":"621234*********4569","other":6212345678901234569}');
  });

  it.each([
    ['12/30', '12/30'],
    ['12/2030', '12/30'],
    ['2030-12', '12/30'],
    ['13/30', null],
    ['1230', null],
  ])('normaliseExpiry(%s) is %s', (value, out) => expect(normaliseExpiry(value)).toBe(out));
});

// Their CPU, a quarter against the whole, is measured by `npm run bench:linear`; here the large inputs once.
describe('large answers are read to the end', () => {
  const twenty = rules(
    ...Array.from({ length: 19 }, (_, i) => ({ match: `$.items[*].missing${i}`, action: 'mask' as const })),
    { match: '$.items[*]', action: 'remove' },
  );

  it('twenty rules over 20,000 items remove every item', () => {
    const answer = ruleAnswer(20_000);
    applyRules(answer, twenty);
    expect(answer).toEqual({ items: [] });
  });

  it('the card number search reads 1 MiB of digits, or of near-PANs, and leaves them (none is a card number)', () => {
    for (const text of digitRuns(MIB)) expect(maskCardNumbers(text)).toBe(text);
  });
});
