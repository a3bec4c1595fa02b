import { findCardNumbers } from '../../../platform/card-data/card-numbers';
import { isAuthenticationDataField } from '../../../platform/card-data/authentication-data';
import { CompiledMapping, MappedField, matches, shownPath } from './body-paths';
import type { Leaf, ReadBody } from './body-leaves';

/**
 * The cards of a body and what goes with each (decision 0155). Card numbers are what the one card-data detector
 * finds in the text, in any spelling, wherever they are (a leaf the route maps or not, a key, an attribute); a
 * route's mappings add which values are a card's expiry, holder name and security code. A security code is also
 * a value of three or four digits whose field name the detector's rule reads as authentication data (`cvv`,
 * `card[cvc]`, `securityCode`), beside a card. Each of those values belongs to the card nearest to it in the
 * document's tree (the most ancestors in common), a tie going to the card before it, else the one after.
 */
export interface CardSlot {
  digits: string;
  /** [start, end) of the number's spelling, from its first digit to its last. */
  start: number;
  end: number;
  /** The number stands outside a JSON string: its id must be written as one. */
  bare: boolean;
  fields: Partial<Record<Exclude<MappedField, 'card_number'>, SlotField>>;
}

interface SlotField {
  leaf: Leaf;
  /** The field as a problem names it (its path, never its value). */
  name: string;
}

/** A value the route names cannot be used as what it is named; nothing was stored or sent. */
export class FieldRefused extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field} ${reason}`);
    this.name = 'FieldRefused';
  }
}

const CARD_DIGITS_AT_LEAST = 12;

export function cardSlots(body: ReadBody, text: string, mapping: CompiledMapping): CardSlot[] {
  const slots = foundCards(text).map((card) => {
    const leaf = leafAround(body.leaves, card.start, card.end);
    const fields: CardSlot['fields'] = {};
    return { ...card, bare: body.bareAt(card.start, card.end), fields, nodes: leaf?.nodes ?? [] };
  });
  const name = (leaf: Leaf) => shownPath(body.format, leaf.path);
  for (const leaf of body.leaves) {
    const role = roleOf(leaf, mapping, slots.length > 0);
    if (role === null) continue;
    if (role === 'card_number') {
      const digits = leaf.value.replace(/\D/g, '').length;
      if (digits >= CARD_DIGITS_AT_LEAST && !slots.some((s) => s.start >= leaf.start && s.end <= leaf.end))
        throw new FieldRefused(name(leaf), 'holds no card number (12–19 digits passing the Luhn check)');
      continue;
    }
    const owner = nearest(slots, leaf);
    if (owner === null) {
      if (role === 'security_code') throw new FieldRefused(name(leaf), 'is a security code with no card beside it');
      continue;
    }
    if (owner.fields[role] !== undefined)
      throw new FieldRefused(name(leaf), `is a second ${role.replace('_', ' ')} for one card`);
    owner.fields[role] = { leaf, name: name(leaf) };
  }
  return slots.map(({ nodes: _nodes, ...slot }) => slot);
}

/** Every card number, the longest first where candidates overlap (a run can hold several Luhn-valid stretches). */
function foundCards(text: string): Array<{ digits: string; start: number; end: number }> {
  const candidates = findCardNumbers(text)
    .map((card) => ({ digits: card.digits, start: card.spans[0][0], end: card.spans.at(-1)![1] }))
    .sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
  const kept: typeof candidates = [];
  for (const card of candidates)
    if (!kept.some((other) => card.start < other.end && other.start < card.end)) kept.push(card);
  return kept.sort((a, b) => a.start - b.start);
}

/** The leaf whose value holds [start, end), by binary search (leaves are in document order). */
function leafAround(leaves: readonly Leaf[], start: number, end: number): Leaf | undefined {
  let low = 0;
  let high = leaves.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (leaves[mid].start > start) high = mid - 1;
    else if (leaves[mid].end < end) low = mid + 1;
    else return leaves[mid];
  }
  return undefined;
}

function roleOf(leaf: Leaf, mapping: CompiledMapping, cards: boolean): MappedField | null {
  for (const [field, pattern] of Object.entries(mapping)) if (matches(pattern, leaf.path)) return field as MappedField;
  const last = leaf.path.at(-1);
  return cards && last !== undefined && /^\d{3,4}$/.test(leaf.value.trim()) && isAuthenticationDataField(last)
    ? 'security_code'
    : null;
}

function shared(a: readonly string[], b: readonly string[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

function nearest<T extends { start: number; nodes: string[] }>(slots: T[], leaf: Leaf): T | null {
  let best: T | null = null;
  let bestShared = -1;
  for (const slot of slots) {
    const n = shared(slot.nodes, leaf.nodes);
    // Ties: the last card before the value wins over any earlier one, and over any card after it.
    const closer = best === null || n > bestShared || (n === bestShared && slot.start < leaf.start);
    if (closer) {
      best = slot;
      bestShared = n;
    }
  }
  return best;
}
