import dns from 'node:dns';
import { generateKeyPairSync, randomInt } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer, Server } from 'node:https';
import { join } from 'node:path';
import { getToken, JWTScope } from '@gr4vy/sdk';
import { CompactEncrypt, compactDecrypt, importPKCS8 } from 'jose';
import { CATALOG } from '../../src/modules/forwarding-setup/definitions/catalog';
import { createApiKey } from '../factories/api-keys';
import { cardNumber, createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectGr4vy } from '../support/gr4vy-schemas';
import { http } from '../support/http';
import { testTempDir } from '../support/temp-data-dir';
import { startTestApp, TestApp } from '../support/test-app';
import { TestCa } from '../support/test-pki';

/**
 * Issue 22: Gr4vy's `mle` method end to end, on a config made from the catalog's Visa definition.
 * The config's hosts are Visa's (`https://sandbox.api.visa.com`, port 443), so the downstream is a
 * real HTTPS server on port 443 of a loopback address of its own, with a certificate for that name
 * from a test CA the service trusts (FORWARD_EXTRA_CA_FILE). The one seam: the name resolves to that
 * address in this process (node:dns `lookup`, which the service's trusted connections use; the host
 * is in FORWARD_INSECURE_HOSTS, so no address guard refuses a loopback answer). The downstream
 * decrypts the JWE with jose and the private key this test generated, not with any code of ours.
 * Where port 443 cannot be bound (a user without the right), the config is made instead from an
 * instance definition that is the catalog's Visa definition with the server's port in its origin, so
 * the flow still runs whole for every newcomer; run as root (CI here) it uses the catalog's own.
 */
const HOST = 'sandbox.api.visa.com';

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

describe('Gr4vy’s mle method on a config of the Visa definition, forwarded and decrypted downstream', () => {
  let t: TestApp;
  let https: Server;
  let token: string;
  let merchant: string;
  const received: Received[] = [];
  const address = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
  const lookup = dns.lookup;
  const recipient = generateKeyPairSync('rsa', { modulusLength: 2048 });
  /** The merchant's MLE key pair: Visa encrypts its answers to the public half (decision 0103). */
  const merchantMle = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const merchantMlePem = merchantMle.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  let port = 443;
  const definitionId = `visa-port-${randomInt(1, 1_000_000)}`;
  const definitionOf = () => (port === 443 ? 'visa' : definitionId);
  const publicKeyPem = recipient.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const privateKeyPem = recipient.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

  beforeAll(async () => {
    const ca = TestCa.create('MLE flow CA');
    const serverCert = ca.issue(HOST, 'server', [HOST]);
    const caFile = join(testTempDir('vf-ca-'), 'ca.pem');
    writeFileSync(caFile, ca.cert);
    https = createServer({ cert: serverCert.cert, key: serverCert.key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('latin1') });
        // Visa's MLE answer: {"encData": "<compact JWE>"} to the merchant's key, encrypted with jose here.
        void new CompactEncrypt(Buffer.from('{"status":"accepted"}'))
          .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A128GCM' })
          .encrypt(merchantMle.publicKey)
          .then((encData) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ encData }));
          });
      });
    });
    port = await listen(https, 443, address).then(
      () => 443,
      async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EACCES') throw error;
        await listen(https, 0, address);
        return (https.address() as AddressInfo).port;
      },
    );
    (dns as { lookup: unknown }).lookup = (hostname: string, options: unknown, callback: unknown) => {
      if (hostname !== HOST) return (lookup as (...args: unknown[]) => void)(hostname, options, callback);
      const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
      const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all;
      if (all) done(null, [{ address, family: 4 }]);
      else done(null, address, 4);
    };

    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: HOST, FORWARD_EXTRA_CA_FILE: caFile } });
    merchant = (await createMerchantAccount(t)).id;
    if (port !== 443) {
      const visa = CATALOG.find((d) => d.id === 'visa')!;
      const copy = await http(t.url, '/vault-forward/definitions', {
        method: 'POST',
        token: await (await createApiKey(t, null)).token(),
        body: {
          id: definitionId,
          display_name: visa.display_name,
          hosts: [`https://${HOST}:${port}`],
          authentications: visa.authentications,
        },
      });
      expect(copy.status).toBe(201);
    }
    token = await getToken({
      privateKey: (await createApiKey(t, merchant)).privateKeyPem,
      // The SDK's own spellings, one scope per step of the flow.
      scopes: [
        JWTScope.VaultForwardDefinitionsRead,
        JWTScope.VaultForwardConfigsWrite,
        JWTScope.VaultForwardAuthenticationsWrite,
        JWTScope.VaultForwardWrite,
      ],
    });
  });
  afterAll(async () => {
    dns.lookup = lookup;
    await t?.close();
    await new Promise<void>((resolve) => {
      https.closeAllConnections();
      https.close(() => resolve());
    });
  });

  it('adds mle with fields[] to a config of the definition; the downstream decrypts the card number, we decrypt its answer', async () => {
    const definition = await http(t.url, `/vault-forward/definitions/${definitionOf()}`, { token });
    expect(definition.status).toBe(200);
    expectGr4vy('PCIForwardDefinition', definition.body);
    const mle = definition.body.authentications.find((a: { kind: string }) => a.kind === 'mle');
    expect(mle.fields.map((f: { key: string }) => f.key)).toEqual([
      'key_id',
      'server_public_key',
      'encryption',
      'client_private_key',
    ]);
    expect(definition.body.hosts).toContain(port === 443 ? `https://${HOST}` : `https://${HOST}:${port}`);

    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { definition_id: definitionOf() },
    });
    expect(config.status).toBe(201);
    expectGr4vy('PCIForwardConfig', config.body);

    const method = await http(t.url, `/vault-forward/configs/${config.body.id}/authentications`, {
      method: 'POST',
      token,
      body: {
        kind: 'mle',
        display_name: 'Visa MLE',
        fields: [
          { key: 'key_id', value: 'mle-key-2026' },
          { key: 'server_public_key', value: publicKeyPem },
          { key: 'encryption', value: 'A256GCM' },
          { key: 'client_private_key', value: merchantMlePem },
        ],
      },
    });
    expect(method.status).toBe(201);
    expectGr4vy('PCIForwardConfigAuthentication', method.body);
    expect(method.body).toMatchObject({
      type: 'vault-forward-config-authentication',
      kind: 'mle',
      display_name: 'Visa MLE',
    });
    // The key is sealed: only its facts come back, under the definition's keys nothing secret.
    expect(method.text).not.toContain(merchantMlePem.split('\n')[3]);
    expect(method.body.fields.map((f: { key: string }) => f.key)).not.toContain('client_private_key');
    expect(method.body.details.response_private_key).toMatchObject({ type: 'rsa', size_bits: 2048 });

    const number = cardNumber('4', 16);
    const card = await createCard(t, merchant, { number, expiration_date: '09/31' });
    const forwarded = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `https://${HOST}${port === 443 ? '' : `:${port}`}/visadirect/fundstransfer/v1/pushfundstransactions`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card.id,
        'x-vault-forward-authentications': method.body.id,
        'content-type': 'application/json',
      },
      rawBody: '{"recipientPrimaryAccountNumber":"{{ CARD_NUMBER_1 }}","amount":"10.00"}',
    });
    expect(forwarded.status).toBe(200);
    // Decrypted with the method's client_private_key before it came back.
    expect(forwarded.body).toEqual({ status: 'accepted' });

    expect(received).toHaveLength(1);
    const got = received[0];
    expect(got.url).toBe('/visadirect/fundstransfer/v1/pushfundstransactions');
    expect(got.headers['content-type']).toBe('application/jose');
    expect(got.body).not.toContain(number);
    const { plaintext, protectedHeader } = await compactDecrypt(
      got.body,
      await importPKCS8(privateKeyPem, 'RSA-OAEP-256'),
    );
    expect(protectedHeader).toMatchObject({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: 'mle-key-2026' });
    expect(JSON.parse(Buffer.from(plaintext).toString())).toEqual({
      recipientPrimaryAccountNumber: number,
      amount: '10.00',
    });
  });
});
