/**
 * A floor for bench:forward: the pass-through proxy (minimal-proxy.ts) plus the vault work no forwarding service can
 * skip — open the two cards (AES-256-GCM envelope, as the vault stores them) and fill the body's
 * placeholders — and nothing else: no auth, checks, records or logs. What (c) costs beyond this is
 * the service's own logic.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { CardVault } from '../src/modules/vault/card-vault.service';
import { VaultKeyring } from '../src/modules/vault/keyring';
import {
  jsonStringContent,
  scanPlaceholders,
  substitutePlaceholders,
} from '../src/modules/vault/placeholders/placeholders';
import { startMinimalProxy } from './minimal-proxy';

const vault = new CardVault(new VaultKeyring([{ id: 'bench', key: Buffer.alloc(32, 7) }]), null as never);
const cards = ['4111111111111111', '5555555555554444'].map((number) => {
  const id = randomUUID();
  return { id, sealed: vault.seal('bench', id, { number, cardholderName: null }), expiry: '12/30' };
});
const encode = (value: string) => Buffer.from(jsonStringContent(value), 'utf8').toString('latin1');

startMinimalProxy((body) => {
  const text = body.toString('latin1');
  scanPlaceholders(text, cards.length, 'json');
  const values = new Map<string, string>();
  cards.forEach((card, index) => {
    values.set(`CARD_NUMBER_${index + 1}`, vault.open('bench', card.id, card.sealed).number);
    values.set(`CARD_EXPIRATION_DATE_${index + 1}`, card.expiry);
  });
  return Buffer.from(substitutePlaceholders(text, values, encode, 'json'), 'latin1');
});
