import { cardScheme, schemeLayout, securityCodeLengthOf } from '../../src/platform/card-data/card-schemes';
import {
  caretAfter,
  expiryValid,
  formatExpiry,
  formatNumber,
  formatPostalCode,
  formatSecurityCode,
  securityCodeLengths,
} from '../../secure-fields/src/fields';
import {
  formChange,
  parentOriginOf,
  submitErrorOf,
  type FieldFlags,
  type FieldType,
} from '../../secure-fields/src/protocol';
import { allowedStyles, fontOf } from '../../secure-fields/src/styles';

/** The Secure Fields frames' pure parts: formatting, checks, styles, the protocol's shapes (decision 0141). */
describe('Secure Fields: card fields', () => {
  it.each([
    ['4111111111111111', '4111 1111 1111 1111', 'visa', true],
    ['4111 1111 1111 1112', '4111 1111 1111 1112', 'visa', false],
    ['378282246310005', '3782 822463 10005', 'amex', true],
    ['37828224631000599', '3782 822463 10005', 'amex', true],
    ['5555-5555-5555-4444', '5555 5555 5555 4444', 'mastercard', true],
    ['2223003122003222', '2223 0031 2200 3222', 'mastercard', true],
    ['30569309025904', '3056 930902 5904', 'diners', true],
    ['4111', '4111', 'visa', false],
    ['', '', 'unknown', false],
  ])('formats %s as %s (%s, valid %s)', (typed, shown, scheme, valid) => {
    const formatted = formatNumber(typed);
    expect(formatted).toEqual({ text: shown, value: shown.replace(/ /g, ''), valid, scheme });
  });

  it('names the scheme from the first digits with the server’s table', () => {
    expect(cardScheme('4')).toBe('visa');
    expect(cardScheme('37')).toBe('amex');
    expect(cardScheme('2221')).toBe('mastercard');
    expect(cardScheme('6011')).toBe('discover');
    expect(cardScheme('3528')).toBe('jcb');
    expect(cardScheme('62')).toBe('unionpay');
    expect(cardScheme('6759')).toBe('maestro');
    expect(cardScheme('9999')).toBe('unknown');
    expect(schemeLayout('34').securityCodeLength).toBe(4);
    expect(schemeLayout('4').securityCodeLength).toBe(3);
    expect(securityCodeLengthOf('amex')).toBe(4);
    expect(securityCodeLengthOf('visa')).toBe(3);
  });

  const now = new Date(2026, 10, 15); // 15 November 2026

  it.each([
    ['1', '1', ''],
    ['4', '04/', ''],
    ['12', '12/', ''],
    ['1228', '12/28', '12/28'],
    ['12/289', '12/28', '12/28'],
  ])('formats the expiry %s as %s', (typed, shown, value) => {
    expect(formatExpiry(typed, now)).toMatchObject({ text: shown, value });
  });

  it('leaves the slash to be deleted', () => expect(formatExpiry('12', now, true).text).toBe('12'));

  it.each([
    ['11/26', true],
    ['10/26', false],
    ['01/27', true],
    ['13/27', false],
    ['00/27', false],
    ['12/99', false],
  ])('expiry %s valid: %s', (value, valid) => expect(expiryValid(value, now)).toBe(valid));

  it('takes the security code’s length from the scheme, or the page’s lengths for an unknown stored card', () => {
    expect(securityCodeLengths('amex', undefined)).toEqual([4]);
    expect(securityCodeLengths('visa', [3, 4])).toEqual([3]);
    expect(securityCodeLengths(undefined, [3, 4])).toEqual([3, 4]);
    expect(securityCodeLengths(undefined, undefined)).toEqual([3]);
    expect(formatSecurityCode('12a34', [4])).toEqual({ text: '1234', value: '1234', valid: true });
    expect(formatSecurityCode('12345', [3])).toEqual({ text: '123', value: '123', valid: true });
    expect(formatSecurityCode('12', [3])).toMatchObject({ valid: false });
  });

  it('accepts a postal code of letters, digits, spaces and hyphens', () => {
    expect(formatPostalCode('SW1A 1AA')).toMatchObject({ value: 'SW1A 1AA', valid: true });
    expect(formatPostalCode('<x>')).toMatchObject({ text: 'x', valid: false });
  });

  it('keeps the caret after the digits typed before it', () => {
    const digit = (c: string) => /\d/.test(c);
    expect(caretAfter('4111 1111 1', 5, digit)).toBe(6);
    expect(caretAfter('4111 1111 1', 4, digit)).toBe(4);
    expect(caretAfter('4111', 0, digit)).toBe(0);
  });
});

describe('Secure Fields: styles', () => {
  it('takes allow-listed properties in every state the library names', () => {
    expect(
      allowedStyles([
        ['--color', 'red'],
        ['--font-size', '16px'],
        ['--focus-color', '#333'],
        ['--placeholder-color', 'grey'],
        ['--invalid-background-color', 'rgb(255, 0, 0)'],
        ['--webkit-font-smoothing', 'antialiased'],
        ['--font-family', '"Open Sans", sans-serif'],
      ]),
    ).toEqual([
      { state: 'base', property: 'color', value: 'red' },
      { state: 'base', property: 'font-size', value: '16px' },
      { state: 'focus', property: 'color', value: '#333' },
      { state: 'placeholder', property: 'color', value: 'grey' },
      { state: 'invalid', property: 'background-color', value: 'rgb(255, 0, 0)' },
      { state: 'base', property: '-webkit-font-smoothing', value: 'antialiased' },
      { state: 'base', property: 'font-family', value: '"Open Sans", sans-serif' },
    ]);
  });

  it.each([
    ['--background-color', 'red url(https://evil.example/x.png)'],
    ['--background-color', 'expression(alert(1))'],
    ['--color', 'red; background-image: url(x)'],
    ['--color', 'red}#field{color:blue'],
    ['--color', '\\75rl(x)'],
    ['--color', '<script>'],
    ['--color', 'javascript:alert(1)'],
    ['--color', '@import "x"'],
    ['--color', 'var(--x)'],
    ['--background-image', 'none'],
    ['--position', 'fixed'],
    ['--hover-display', 'none'],
    ['--font-family', 'Comic Evil'],
    ['--font', '16px url(x)'],
    ['--font', '16px Comic Evil'],
    ['color', 'red'],
  ])('drops %s: %s', (name, value) => expect(allowedStyles([[name, value]])).toEqual([]));

  it('takes the font shorthand when its families are allowed', () => {
    expect(allowedStyles([['--font', 'italic 16px/1.5 Lato, sans-serif']])).toHaveLength(1);
  });

  it('ignores what is not a list of pairs', () => {
    expect(allowedStyles('color: red')).toEqual([]);
    expect(allowedStyles([['--color'], { color: 'red' }, ['--color', { x: 1 }]])).toEqual([]);
  });

  it('takes the font parameter when allow-listed', () => {
    expect(fontOf('Open+Sans')).toBe('Open Sans');
    expect(fontOf('Evil+Font')).toBeNull();
    expect(fontOf('Lato");x')).toBeNull();
    expect(fontOf(null)).toBeNull();
  });
});

describe('Secure Fields: protocol', () => {
  it('accepts an http(s) origin as parentOrigin, nothing else', () => {
    expect(parentOriginOf('https://shop.example')).toBe('https://shop.example');
    expect(parentOriginOf('http://shop.localhost:3000')).toBe('http://shop.localhost:3000');
    expect(parentOriginOf('https://shop.example/')).toBeNull();
    expect(parentOriginOf('javascript:alert(1)')).toBeNull();
    expect(parentOriginOf('null')).toBeNull();
    expect(parentOriginOf(null)).toBeNull();
  });

  const flags = (valid: boolean): FieldFlags => ({ valid, empty: !valid, autofilled: false });

  it('is complete when number, expiry and every field shown are valid', () => {
    const states = new Map<FieldType, FieldFlags>([
      ['number', flags(true)],
      ['expiryDate', flags(true)],
      ['securityCode', flags(false)],
    ]);
    expect(formChange(states, false).complete).toBe(false);
    states.set('securityCode', flags(true));
    expect(formChange(states, false)).toEqual({
      fields: { number: flags(true), expiryDate: flags(true), securityCode: flags(true) },
      complete: true,
    });
    expect(formChange(new Map([['number', flags(true)]]), false).complete).toBe(false);
  });

  it('needs only the security code for a stored card', () => {
    const states = new Map<FieldType, FieldFlags>([['securityCode', flags(true)]]);
    expect(formChange(states, true).complete).toBe(true);
    expect(formChange(states, true).fields.number).toEqual({ valid: false, empty: true, autofilled: false });
    expect(formChange(new Map(), true).complete).toBe(false);
  });

  it('reads status, code and message from a problem or Gr4vy’s error body', () => {
    expect(submitErrorOf(404, { type: 'error', code: 'not_found', status: 404, message: 'No session' })).toEqual({
      status: 404,
      code: 'not_found',
      message: 'No session',
    });
    expect(submitErrorOf(429, { type: 'https://errors.example/too_many_requests', title: 'Too many' })).toEqual({
      status: 429,
      code: 'too_many_requests',
      message: 'Too many',
    });
    expect(submitErrorOf(502, null)).toEqual({ status: 502, code: 'request_failed', message: 'HTTP 502' });
  });
});
