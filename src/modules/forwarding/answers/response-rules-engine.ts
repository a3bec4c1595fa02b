/**
 * The response rules applied to a parsed JSON answer (decision 0097). Pure: storing a tokenized card is
 * the caller's (ResponseFilter); card numbers no rule covered are found by card-data/.
 *
 * Cost: each rule walks at most every value of the answer once (a path moves one level per segment, a
 * rule has a bounded number of segments, a config at most 20 rules). Nothing recurses on the answer's
 * depth: the value walk keeps its own stack.
 */
import { binOf } from '../../../platform/card-data/card-numbers';
import { cardholderNameProblem, cardNumberProblem, expirationDateProblem, normaliseCardNumber } from '../../vault/card';
import { scalarText } from './json-text';
import type { CompiledRule, OnExistingAction, PathSegment } from '../../forwarding-setup/configs/response-rules';

type Container = Record<string, unknown> | unknown[];

/** Where a path matched: the container, the member, and the indices [*] took on the way. */
export interface PathMatch {
  parent: Container;
  key: string | number;
  indices: number[];
}

/** A card a tokenize rule found; `put` sets what goes in its place. */
export interface FoundCard {
  rule: number;
  number: string;
  expirationDate: string | null;
  cardholderName: string | null;
  onExisting: OnExistingAction;
  put(value: string): void;
}

/** Why a rule could not be applied; names the rule, never the value. */
export class RuleFailure extends Error {
  constructor(
    readonly rule: number,
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const own = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);

/** Every place `segments` names in `root`, in document order. */
export function matchPath(root: unknown, segments: PathSegment[], fixed?: number[]): PathMatch[] {
  const out: PathMatch[] = [];
  let level: Array<{ value: unknown; indices: number[] }> = [{ value: root, indices: [] }];
  segments.forEach((segment, depth) => {
    const last = depth === segments.length - 1;
    const next: typeof level = [];
    for (const { value, indices } of level) {
      if ('name' in segment) {
        if (typeof value !== 'object' || value === null || Array.isArray(value) || !own(value, segment.name)) continue;
        const container = value as Record<string, unknown>;
        if (last) out.push({ parent: container, key: segment.name, indices });
        else next.push({ value: container[segment.name], indices });
      } else if (Array.isArray(value)) {
        const wanted = 'index' in segment ? segment.index : fixed?.[indices.length];
        const positions = wanted === undefined ? value.keys() : wanted < value.length ? [wanted] : [];
        for (const i of positions) {
          const taken = 'any' in segment ? [...indices, i] : indices;
          if (last) out.push({ parent: value, key: i, indices: taken });
          else next.push({ value: value[i], indices: taken });
        }
      }
    }
    level = next;
  });
  return out;
}

/** The value a sibling path names, with the [*] of the match's path taking the same indices. */
function sibling(root: unknown, segments: PathSegment[] | undefined, indices: number[]): unknown {
  if (!segments) return undefined;
  const [found] = matchPath(root, segments, indices);
  return found ? (found.parent as Record<string, unknown>)[found.key as string] : undefined;
}

const REMOVED = Symbol('removed');

/**
 * Applies the rules in order, in place: masks, removes, and returns the cards tokenize rules found
 * (their `put` writes the payment method id). Whether anything matched at all is `changed`.
 */
export function applyRules(root: unknown, rules: CompiledRule[]): { cards: FoundCard[]; changed: boolean } {
  const cards: FoundCard[] = [];
  const emptied = new Set<unknown[]>();
  let changed = false;
  rules.forEach((rule, index) => {
    for (const { parent, key, indices } of matchPath(root, rule.match)) {
      const container = parent as Record<string | number, unknown>;
      const value = container[key];
      if (value === REMOVED) continue;
      if (rule.action === 'remove') {
        changed = true;
        if (Array.isArray(parent)) {
          // Compacted once at the end: splicing each would cost the array's length every time.
          parent[key as number] = REMOVED;
          emptied.add(parent);
        } else delete container[key];
        continue;
      }
      const text = scalarText(value);
      if (text === null) continue; // null, objects: nothing to vault
      changed = true;
      if (rule.action === 'mask') {
        container[key] = maskValue(text);
        continue;
      }
      const number = normaliseCardNumber(text);
      if (number === null || cardNumberProblem(number) !== null)
        throw new RuleFailure(index, 'match', 'the value it matched is not a card number');
      cards.push({
        rule: index,
        number,
        ...answeredFields(root, rule, index, indices),
        onExisting: rule.onExisting,
        put: (id) => {
          container[key] = id;
        },
      });
    }
  });
  for (const array of emptied) {
    let kept = 0;
    for (const item of array) if (item !== REMOVED) array[kept++] = item;
    array.length = kept;
  }
  return { cards, changed };
}

/**
 * The expiry and name a tokenize rule's sibling paths name, null where they name nothing (or null).
 * What is there goes through the rules POST /payment-methods applies (modules/vault/card.ts, decision 0117):
 * an answer stores no card the API would refuse.
 */
function answeredFields(
  root: unknown,
  rule: CompiledRule,
  index: number,
  indices: number[],
): Pick<FoundCard, 'expirationDate' | 'cardholderName'> {
  const expiry = sibling(root, rule.expirationDate, indices) ?? null;
  const name = sibling(root, rule.cardholderName, indices) ?? null;
  const expirationDate = typeof expiry === 'string' ? (normaliseExpiry(expiry) ?? expiry) : expiry;
  if (expirationDate !== null && expirationDateProblem(expirationDate) !== null)
    throw new RuleFailure(index, 'expiration_date', 'the expiry it names is not MM/YY, MM/YYYY or YYYY-MM');
  const nameProblem = name === null ? null : cardholderNameProblem(name);
  if (nameProblem !== null)
    throw new RuleFailure(index, 'cardholder_name', `the cardholder name it names ${nameProblem}`);
  return { expirationDate: expirationDate as string | null, cardholderName: name as string | null };
}

/** MM/YY from MM/YY, MM/YYYY or YYYY-MM; null for anything else. */
export function normaliseExpiry(value: string): string | null {
  const slash = /^(0[1-9]|1[0-2])\/(?:20)?(\d{2})$/.exec(value.trim());
  if (slash) return `${slash[1]}/${slash[2]}`;
  const iso = /^20(\d{2})-(0[1-9]|1[0-2])$/.exec(value.trim());
  return iso ? `${iso[2]}/${iso[1]}` : null;
}

/** Digits kept: the BIN where binOf allows it and the last four; the rest of the digits become `*`. */
export function maskValue(value: string): string {
  const digits = value.replace(/\D/g, '');
  const head = binOf(digits)?.length ?? 0;
  const tail = digits.length >= 10 ? 4 : 0;
  let seen = 0;
  return value.replace(/\d/g, (d) => {
    const at = seen++;
    return at < head || at >= digits.length - tail ? d : '*';
  });
}
