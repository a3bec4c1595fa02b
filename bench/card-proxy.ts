/**
 * A floor for bench:forward: the pass-through proxy plus the vault work no forwarding service can
 * skip — open the two cards (AES-256-GCM envelope, as the vault stores them) and fill the body's
 * placeholders — and nothing else: no auth, checks, records or logs. What (c) costs beyond this is
 * the service's own logic.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Agent } from 'undici';
import { CardVault } from '../src/vault/card-vault.service';
import { VaultKeyring } from '../src/vault/keyring';
import { jsonStringContent, scanPlaceholders, substitutePlaceholders } from '../src/vault/placeholders';

const vault = new CardVault(new VaultKeyring([{ id: 'bench', key: Buffer.alloc(32, 7) }]), null as never);
const cards = ['4111111111111111', '5555555555554444'].map((number) => {
  const id = randomUUID();
  return { id, sealed: vault.seal('bench', id, { number, cardholderName: null }), expiry: '12/30' };
});
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
const encode = (value: string) => Buffer.from(jsonStringContent(value), 'utf8').toString('latin1');

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const target = new URL(String(req.headers['x-vault-forward-url']));
    const text = Buffer.concat(chunks).toString('latin1');
    scanPlaceholders(text, cards.length, 'json');
    const values = new Map<string, string>();
    cards.forEach((card, index) => {
      values.set(`CARD_NUMBER_${index + 1}`, vault.open('bench', card.id, card.sealed).number);
      values.set(`CARD_EXPIRATION_DATE_${index + 1}`, card.expiry);
    });
    agent
      .request({
        origin: target.origin,
        path: target.pathname,
        method: 'POST',
        headers: { 'content-type': String(req.headers['content-type'] ?? 'application/json') },
        body: Buffer.from(substitutePlaceholders(text, values, encode, 'json'), 'latin1'),
      })
      .then(async (response) => {
        const body = Buffer.from(await response.body.arrayBuffer());
        res.writeHead(response.statusCode, { 'content-type': String(response.headers['content-type'] ?? 'application/octet-stream') });
        res.end(body);
      })
      .catch(() => {
        res.writeHead(502);
        res.end();
      });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
});
