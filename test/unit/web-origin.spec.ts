import { webOrigin } from '../../src/platform/config/web-origin';
import {
  normaliseSecureFieldsOrigins,
  secureFieldsOriginsProblem,
} from '../../src/modules/merchants/accounts/secure-fields-origins';

describe('web origins (Secure Fields, decision 0140)', () => {
  it.each([
    ['https://shop.example.com', 'https://shop.example.com'],
    ['https://Shop.Example.COM:443', 'https://shop.example.com'],
    ['https://shop.example.com:8443', 'https://shop.example.com:8443'],
    ['https://shop.example.com/', 'https://shop.example.com'],
    ['http://localhost:8080', 'http://localhost:8080'],
    ['http://shop.localhost', 'http://shop.localhost'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
    ['https://[::1]:8443', 'https://[::1]:8443'],
  ])('normalises %p to %p', (raw, origin) => {
    expect(webOrigin(raw)).toEqual({ origin });
  });

  it.each([
    ['', 'at most'],
    ['https://shop.example.com/checkout', 'no path'],
    ['https://shop.example.com//', 'no path'],
    ['https://shop.example.com?a=1', 'no path, query or fragment'],
    ['https://shop.example.com#top', 'no path, query or fragment'],
    ['https://user@shop.example.com', 'user or password'],
    ['https://user:pw@shop.example.com', 'user or password'],
    ['http://shop.example.com', 'http:// only for localhost'],
    ['http://localhost.example.com', 'http:// only for localhost'],
    ['ftp://shop.example.com', 'must use https://'],
    ['javascript:alert(1)', 'must use https://'],
    ['null', 'must be an origin'],
    ['*', 'must be an origin'],
    ['https://*.example.com', 'must name a host'],
    ['https://shop.example.com /x', 'without spaces'],
    ['https://shop.example.com\\x', 'backslashes'],
    [`https://${'a'.repeat(300)}.example`, 'at most'],
  ])('refuses %p', (raw, message) => {
    const check = webOrigin(raw);
    expect('problem' in check && check.problem).toContain(message);
  });

  it('checks and normalises a merchant’s list: every item, duplicates dropped, order kept', () => {
    expect(secureFieldsOriginsProblem(['https://a.example', 'http://b.localhost:3000'])).toBeNull();
    expect(secureFieldsOriginsProblem(['https://a.example', 'https://a.example/x'])).toBe(
      'item 1 must be an origin only: no path, query or fragment',
    );
    expect(secureFieldsOriginsProblem(['https://a.example', 7])).toBe('item 1 must be a string');
    expect(secureFieldsOriginsProblem('https://a.example')).toBe('must be an array of origins');
    expect(
      normaliseSecureFieldsOrigins([
        'https://B.example:443',
        'https://a.example',
        'https://b.example/',
        ' https://c.example ',
      ]),
    ).toEqual(['https://b.example', 'https://a.example', 'https://c.example']);
  });
});
