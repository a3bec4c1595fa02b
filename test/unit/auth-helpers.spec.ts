import { scopeGranted } from '../../src/modules/merchants/access/scopes';
import { algorithmOf, signToken } from '../../src/modules/merchants/auth/token-signer';
import { generateKeyPairSync } from 'node:crypto';
import { slugify } from '../../src/modules/merchants/accounts/merchant-account-id';
import { isClearHeader, redactHeaders } from '../../src/platform/logging/redaction';

describe('scopeGranted', () => {
  it('grants exact scopes and same-action wildcards only', () => {
    expect(scopeGranted('buyers.read', new Set(['buyers.read']))).toBe(true);
    expect(scopeGranted('buyers.read', new Set(['*.read']))).toBe(true);
    expect(scopeGranted('buyers.read', new Set(['*.write', 'buyers.write']))).toBe(false);
    expect(scopeGranted('vault-forwards.write', new Set(['*.write']))).toBe(true);
    expect(scopeGranted('merchant-accounts.write', new Set(['merchant-accounts.read']))).toBe(false);
  });

  it("grants a scope to the Gr4vy SDK's spelling of it, and to that spelling only", () => {
    expect(scopeGranted('vault-forwards.write', new Set(['vault-forward.write']))).toBe(true);
    expect(scopeGranted('vault-forwards.read', new Set(['vault-forward.read']))).toBe(true);
    expect(scopeGranted('vault-forwards.read', new Set(['vault-forward.write']))).toBe(false);
    expect(scopeGranted('vault-forwards.write', new Set(['vault-forward.read']))).toBe(false);
    expect(scopeGranted('vault-forward-configs.write', new Set(['vault-forward.write']))).toBe(false);
  });
});

describe('token signer', () => {
  it('picks the algorithm from the curve and refuses other keys', () => {
    const pem = (curve: string) =>
      generateKeyPairSync('ec', { namedCurve: curve }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(algorithmOf(pem('secp521r1'))).toBe('ES512');
    expect(algorithmOf(pem('prime256v1'))).toBe('ES256');
    expect(() => algorithmOf(pem('secp384r1'))).toThrow('P-521 or P-256');
  });

  it('refuses lifetimes above one hour', async () => {
    const privateKeyPem = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    await expect(signToken({ privateKeyPem, keyId: 'k', ttlSeconds: 3601 })).rejects.toThrow('3600');
  });
});

describe('slugify', () => {
  it.each([
    ['ACME Europe GmbH', 'acme-europe-gmbh'],
    ['  Café — Zürich!! ', 'cafe-zurich'],
    ['***', 'merchant'],
  ])('%s → %s', (name, slug) => expect(slugify(name)).toBe(slug));
});

describe('header redaction', () => {
  it('keeps only allow-listed headers in clear: credentials, templated and unknown headers are redacted', () => {
    expect(isClearHeader('Content-Type')).toBe(true);
    expect(isClearHeader('X-Vault-Forward-Header-X-Api-Key')).toBe(false);
    // Cryptograms (decision 0100), misspelt ones included, and names no heuristic would call secret.
    for (const name of ['x-vault-forward-cryptograms', 'x-vault-forward-cryptogarms', 'x-merchant-pass', 'x-account'])
      expect(isClearHeader(name)).toBe(false);
    expect(
      redactHeaders({
        authorization: 'Bearer x',
        'x-vault-forward-header-authorization': 'Bearer y',
        'x-vault-forward-url': 'https://a',
        accept: '*/*',
      }),
    ).toEqual({
      authorization: '[Redacted]',
      'x-vault-forward-header-authorization': '[Redacted]',
      'x-vault-forward-url': 'https://a',
      accept: '*/*',
    });
  });
});
