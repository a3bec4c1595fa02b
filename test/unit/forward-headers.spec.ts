import { editDistance, intendedHeader } from '../../src/modules/forwarding/request/forward-headers';

describe('misspelled forwarding headers', () => {
  it.each([
    ['x-valud-forward-authentications', 'x-vault-forward-authentications'],
    ['x-vault-forward-authentication', 'x-vault-forward-authentications'],
    ['x-vault-foward-url', 'x-vault-forward-url'],
    ['x-vault-forward-payment-method', 'x-vault-forward-payment-methods'],
    ['x-vault-forward-http-methods', 'x-vault-forward-http-method'],
    ['x-vault-foward-header-authorization', 'x-vault-forward-header-authorization'],
    ['x-vault-forward-headers-authorization', 'x-vault-forward-header-authorization'],
    ['x-vault-forward-authorization', 'x-vault-forward-header-authorization'],
    ['x-vault-forward-foo', 'x-vault-forward-header-foo'],
    ['x-vault-forward-urll', 'x-vault-forward-url'],
    ['x-valut-forward-header-x-api-key', 'x-vault-forward-header-x-api-key'],
    ['x-vault-forward-cryptogram', 'x-vault-forward-cryptograms'],
    ['x-vault-forward-cryptogams', 'x-vault-forward-cryptograms'],
  ])('%s → %s', (name, meant) => expect(intendedHeader(name)).toBe(meant));

  it.each([
    'x-forwarded-for',
    'x-forwarded-proto',
    'x-request-id',
    'content-type',
    'authorization',
    'x-merchant-account-id',
    'accept',
  ])('%s is unrelated', (name) => expect(intendedHeader(name)).toBeNull());

  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('vaul', 'vual')).toBe(1);
    expect(editDistance('valud', 'vault')).toBe(2);
  });
});
