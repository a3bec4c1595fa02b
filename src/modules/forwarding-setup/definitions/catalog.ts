import type { AuthenticationDefinition, Definition, DefinitionField } from './definition';

/**
 * The definitions shipped with the service: a data file, reviewed like code. The hosts are the third
 * parties' real public API origins (production and test); the authentications are the kinds of ours
 * that each accepts. What a merchant's contract enables (which API products, which certificate) is
 * for the merchant to check with the third party: a definition only says where card data may go and
 * which fields each kind needs. Tested (test/unit/definitions-catalog.spec.ts) against the same rules
 * as an administrator's definition.
 */

const certificate: DefinitionField = {
  key: 'certificate',
  display_name: 'Client certificate (PEM)',
  required: true,
  format: 'multiline',
  secret: false,
  maps_to: 'certificate',
};
const privateKey: DefinitionField = {
  key: 'private_key',
  display_name: 'Private key (PEM)',
  required: true,
  format: 'multiline',
  secret: true,
  maps_to: 'private_key',
};
const passphrase: DefinitionField = {
  key: 'passphrase',
  display_name: 'Private key passphrase',
  required: false,
  format: 'text',
  secret: true,
  maps_to: 'passphrase',
};
const caCertificates: DefinitionField = {
  key: 'ca_certificates',
  display_name: 'CA certificates (PEM)',
  required: false,
  format: 'multiline',
  secret: false,
  maps_to: 'ca_certificates',
};

function mtls(description: string): AuthenticationDefinition {
  return {
    kind: 'mtls',
    title: 'Mutual TLS',
    description,
    fields: [certificate, privateKey, passphrase, caCertificates],
    settings: {},
  };
}

/*
 * Only third parties that take one of our kinds are listed: Gr4vy's definition has at least one
 * authentication. A PSP whose API takes just a key in a header (Stripe, Adyen, Braintree, PayPal's REST
 * API, Checkout.com's standard origin) needs no method and no definition: a config with its hosts of its own
 * (`{display_name, hosts}`), and the key sent with `x-vault-forward-header-authorization` (or
 * `x-vault-forward-header-x-api-key`), passed through as it is (docs/forwarding.md).
 */
export const CATALOG: readonly Definition[] = [
  {
    id: 'amadeus',
    display_name: 'Amadeus',
    hosts: ['https://api.amadeus.com', 'https://test.api.amadeus.com'],
    source: 'catalog',
    authentications: [mtls('The client certificate Amadeus issued for your account.')],
  },
  {
    id: 'checkout-com',
    display_name: 'Checkout.com (mTLS private connection)',
    hosts: ['https://mtls.api.checkout.com', 'https://mtls.api.sandbox.checkout.com'],
    source: 'catalog',
    authentications: [
      mtls(
        'Checkout.com’s mTLS origins, in certificate authentication mode: a leaf certificate and key issued by your ' +
          'own private CA, whose root you registered with Checkout.com. (Its standard origin, api.checkout.com, ' +
          'takes a secret key in the Authorization header instead: no method, see the catalog’s notes.)',
      ),
    ],
  },
  {
    id: 'cybersource',
    display_name: 'Cybersource',
    hosts: ['https://api.cybersource.com', 'https://apitest.cybersource.com'],
    source: 'catalog',
    // Cybersource's own request authentication (HTTP Signature over host, date, request-target, digest and
    // v-c-merchant-id, or a JWT) is not a template our HMAC signer can express, so it is not offered as a
    // `signature` method here: the caller computes those headers and sends them with x-vault-forward-header-*.
    authentications: [
      mtls(
        'A client certificate registered with Cybersource for mutual authentication. Cybersource’s HTTP Signature ' +
          'or JWT headers are computed by the caller and passed through.',
      ),
    ],
  },
  {
    id: 'mastercard',
    display_name: 'Mastercard',
    hosts: ['https://api.mastercard.com', 'https://sandbox.api.mastercard.com'],
    source: 'catalog',
    authentications: [mtls('The client certificate of your Mastercard Developers project.')],
  },
  {
    id: 'paypal-nvp',
    display_name: 'PayPal NVP/SOAP API (API certificate)',
    hosts: ['https://api.paypal.com', 'https://api.sandbox.paypal.com'],
    source: 'catalog',
    authentications: [
      mtls(
        'The API certificate of PayPal’s NVP/SOAP API: the certificate and the private key from the ' +
          'cert_key_pem.txt PayPal lets you download (it holds both, in PEM). The API username and password go in ' +
          'the request body, as the caller sends it. (API signature credentials use other hosts, api-3t.…, and ' +
          'need no method.)',
      ),
    ],
  },
  {
    id: 'visa',
    display_name: 'Visa Developer Platform',
    hosts: ['https://api.visa.com', 'https://sandbox.api.visa.com'],
    source: 'catalog',
    authentications: [
      mtls('Two-way SSL: the client certificate and key of your Visa Developer project.'),
      {
        kind: 'mle',
        title: 'Message Level Encryption',
        description:
          'The request body encrypted as a compact JWE (RSA-OAEP-256) to the server encryption key of your project, ' +
          'with its key id; with your MLE private key, Visa’s encrypted answers ({"encData": …}) are decrypted ' +
          'before the response rules and returned in plain.',
        fields: [
          {
            key: 'key_id',
            display_name: 'MLE key id',
            required: true,
            format: 'text',
            secret: false,
            maps_to: 'key_id',
          },
          {
            key: 'server_public_key',
            display_name: 'Server encryption public key (PEM)',
            required: true,
            format: 'multiline',
            secret: false,
            maps_to: 'public_key',
          },
          {
            key: 'encryption',
            display_name: 'Content encryption (A256GCM or A128CBC-HS256)',
            required: true,
            format: 'text',
            secret: false,
            maps_to: 'encryption',
          },
          {
            key: 'client_private_key',
            display_name: 'Your MLE private key, for encrypted answers (PEM)',
            required: false,
            format: 'multiline',
            secret: true,
            maps_to: 'response_private_key',
          },
        ],
        settings: { algorithm: 'RSA-OAEP-256' },
      },
    ],
  },
  {
    id: 'worldpay',
    display_name: 'Worldpay',
    hosts: ['https://access.worldpay.com', 'https://try.access.worldpay.com'],
    source: 'catalog',
    authentications: [mtls('A client certificate Worldpay has enabled for your entity.')],
  },
];
