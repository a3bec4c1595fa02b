import { CATALOG } from '../../src/modules/forwarding-setup/definitions/catalog';
import {
  authenticationDefinitionErrors,
  customDefinition,
  parseOrigin,
} from '../../src/modules/forwarding-setup/definitions/definition';
import { VaultForwardDefinitionResponse } from '../../src/modules/forwarding-setup/definitions/dto/vault-forward-definition.dto';
import { gr4vyErrors } from '../support/gr4vy-schemas';

describe('the shipped definitions catalog', () => {
  it.each(CATALOG.map((d) => [d.id, d] as const))(
    '%s holds to the rules of an administrator’s definition',
    (_id, d) => {
      expect(d.id).toMatch(/^[a-z0-9](?:[a-z0-9-]{0,48}[a-z0-9])?$/);
      expect(d.hosts.map((h) => parseOrigin(h))).toEqual(d.hosts);
      expect(d.hosts.every((h) => h.startsWith('https://'))).toBe(true);
      expect(authenticationDefinitionErrors(d.authentications)).toEqual([]);
      // The lengths an administrator's definition is held to (CreateVaultForwardDefinitionDto).
      expect(d.display_name.length).toBeGreaterThan(0);
      expect(d.display_name.length).toBeLessThanOrEqual(50);
      for (const a of d.authentications) {
        expect(a.title.length).toBeLessThanOrEqual(100);
        expect(a.description.length).toBeLessThanOrEqual(1000);
      }
      expect(gr4vyErrors('PCIForwardDefinition', VaultForwardDefinitionResponse.from(d))).toEqual([]);
    },
  );

  it('lists these third parties, each with at least one of our kinds (Gr4vy’s definition has one at least)', () => {
    expect(CATALOG.map((d) => [d.id, d.authentications.map((a) => a.kind)])).toEqual([
      ['amadeus', ['mtls']],
      ['checkout-com', ['mtls']],
      ['cybersource', ['mtls']],
      ['mastercard', ['mtls']],
      ['paypal-nvp', ['mtls']],
      ['visa', ['mtls', 'mle']],
      ['worldpay', ['mtls']],
    ]);
    expect(CATALOG.find((d) => d.id === 'checkout-com')!.hosts).toEqual([
      'https://mtls.api.checkout.com',
      'https://mtls.api.sandbox.checkout.com',
    ]);
    expect(CATALOG.find((d) => d.id === 'paypal-nvp')!.hosts).toEqual([
      'https://api.paypal.com',
      'https://api.sandbox.paypal.com',
    ]);
  });

  it('has unique ids', () => {
    expect(new Set(CATALOG.map((d) => d.id)).size).toBe(CATALOG.length);
  });

  it('a config’s custom definition offers every kind, with our own fields, and is Gr4vy-shaped', () => {
    const custom = customDefinition('0b0c6f5e-5c38-4a5e-9d0e-6f3a7f2f6d10', 'Mine', ['api.psp.example']);
    expect(custom.authentications.map((a) => a.kind)).toEqual(['mle', 'mtls', 'signature']);
    expect(authenticationDefinitionErrors(custom.authentications)).toEqual([]);
    expect(gr4vyErrors('PCIForwardDefinition', VaultForwardDefinitionResponse.from(custom))).toEqual([]);
  });

  it('the Gr4vy schema check refuses what breaks Gr4vy’s contract (so it can fail)', () => {
    expect(gr4vyErrors('PCIForwardDefinition', { id: 'x', authentications: [] })).not.toEqual([]);
    expect(gr4vyErrors('PCIForwardConfig', { id: 'not-a-uuid', hosts: [] })).toHaveLength(2);
    expect(gr4vyErrors('PCIForwardConfigAuthentication', { kind: 'hmac-signature' })).not.toEqual([]);
  });

  it.each([
    ['https://API.Example.com', 'https://api.example.com'],
    ['https://api.example.com:443', 'https://api.example.com'],
    ['https://api.example.com:8443', 'https://api.example.com:8443'],
    ['api.example.com', null],
    ['https://api.example.com/', null],
    ['https://user@api.example.com', null],
    ['ftp://api.example.com', null],
  ])('parseOrigin(%s) is %s', (input, origin) => {
    expect(parseOrigin(input)).toBe(origin);
  });
});
