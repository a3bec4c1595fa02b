/**
 * Response rules of a config (issue 27, decisions/0097): which values of a downstream's JSON answer are
 * tokenized, masked or removed. Parsed and checked when the config is written, so a forward never meets
 * a rule it cannot apply; stored as written, compiled again (cheaply) when the enabled configs are read.
 *
 * The path language is a small JSONPath subset: `$`, then `.name` (letters, digits, `_`, `-`), `[n]`
 * and `[*]`. No filters, recursion (`..`) or slices: each segment moves one level down, so applying a
 * path visits each value of the answer at most once.
 */
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemException } from '../../../platform/problem/problem';

export const RESPONSE_RULE_ACTIONS = ['tokenize', 'mask', 'remove'] as const;
export type ResponseRuleAction = (typeof RESPONSE_RULE_ACTIONS)[number];
export const UNMATCHED_PAN_ACTIONS = ['pass', 'mask', 'refuse'] as const;
/** What a tokenize rule does to a payment method the merchant holds already (decision 0117). */
export const ON_EXISTING_ACTIONS = ['keep', 'update_expiry'] as const;
export type OnExistingAction = (typeof ON_EXISTING_ACTIONS)[number];
export type UnmatchedPanAction = (typeof UNMATCHED_PAN_ACTIONS)[number];

export const MAX_RESPONSE_RULES = 20;
const MAX_PATH_LENGTH = 200;
const MAX_SEGMENTS = 32;

/** A rule as stored and answered (the API's snake_case). */
export interface ResponseRuleInput {
  match: string;
  action: ResponseRuleAction;
  expiration_date?: string;
  cardholder_name?: string;
  /** tokenize: keep (the default) or update_expiry of a card the merchant holds already. */
  on_existing?: OnExistingAction;
}

/** One step down: a member name, an array index, or every element of an array. */
export type PathSegment = { name: string } | { index: number } | { any: true };

export interface CompiledRule {
  match: PathSegment[];
  action: ResponseRuleAction;
  expirationDate?: PathSegment[];
  cardholderName?: PathSegment[];
  onExisting: OnExistingAction;
}

const NAME = /^[A-Za-z0-9_-]+/;
const BRACKET = /^\[(\*|0|[1-9][0-9]{0,8})\]/;

/** The segments of a path, or why it is not one (words that never quote the path back at length). */
export function parsePath(path: string): PathSegment[] | string {
  if (path.length > MAX_PATH_LENGTH) return `must be at most ${MAX_PATH_LENGTH} characters`;
  if (!path.startsWith('$')) return 'must start with $';
  const segments: PathSegment[] = [];
  let rest = path.slice(1);
  while (rest.length > 0) {
    if (segments.length >= MAX_SEGMENTS) return `must have at most ${MAX_SEGMENTS} segments`;
    if (rest.startsWith('.')) {
      const name = NAME.exec(rest.slice(1));
      if (!name) return 'a . must be followed by a member name of letters, digits, _ or -';
      segments.push({ name: name[0] });
      rest = rest.slice(1 + name[0].length);
      continue;
    }
    const bracket = BRACKET.exec(rest);
    if (!bracket) return 'only .name, [n] and [*] segments are supported';
    segments.push(bracket[1] === '*' ? { any: true } : { index: Number(bracket[1]) });
    rest = rest.slice(bracket[0].length);
  }
  if (segments.length === 0) return 'must name a value below $';
  return segments;
}

/**
 * Checks the rules of a request body (class-validator has checked the array itself) and returns them
 * in their stored form; 400 validation-failed naming `response_rules[i].<field>` otherwise.
 */
export function checkResponseRules(input: unknown): ResponseRuleInput[] {
  if (!Array.isArray(input)) throw invalid('response_rules', 'must be an array');
  if (input.length > MAX_RESPONSE_RULES)
    throw invalid('response_rules', `must have at most ${MAX_RESPONSE_RULES} rules`);
  return input.map((rule: unknown, index) => {
    const at = `response_rules[${index}]`;
    if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) throw invalid(at, 'must be an object');
    const fields = rule as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      if (!['match', 'action', 'expiration_date', 'cardholder_name', 'on_existing'].includes(key))
        throw invalid(`${at}.${key}`, 'is not a field of a response rule');
    }
    if (!RESPONSE_RULE_ACTIONS.includes(fields.action as ResponseRuleAction))
      throw invalid(`${at}.action`, `must be one of ${RESPONSE_RULE_ACTIONS.join(', ')}`);
    const out: ResponseRuleInput = {
      match: checkPath(fields.match, `${at}.match`),
      action: fields.action as ResponseRuleAction,
    };
    for (const [field, key] of [
      ['expiration_date', 'expiration_date'],
      ['cardholder_name', 'cardholder_name'],
    ] as const) {
      if (fields[field] === undefined) continue;
      if (out.action !== 'tokenize') throw invalid(`${at}.${field}`, 'is only for action tokenize');
      out[key] = checkPath(fields[field], `${at}.${field}`);
    }
    if (fields.on_existing !== undefined) {
      if (out.action !== 'tokenize') throw invalid(`${at}.on_existing`, 'is only for action tokenize');
      if (!ON_EXISTING_ACTIONS.includes(fields.on_existing as OnExistingAction))
        throw invalid(`${at}.on_existing`, `must be one of ${ON_EXISTING_ACTIONS.join(', ')}`);
      out.on_existing = fields.on_existing as OnExistingAction;
    }
    return out;
  });
}

/** Stored rules (checked when written) in the form the answer is walked with. */
export function compileResponseRules(rules: ResponseRuleInput[]): CompiledRule[] {
  return rules.map((rule) => ({
    match: parsePath(rule.match) as PathSegment[],
    action: rule.action,
    expirationDate: rule.expiration_date === undefined ? undefined : (parsePath(rule.expiration_date) as PathSegment[]),
    cardholderName: rule.cardholder_name === undefined ? undefined : (parsePath(rule.cardholder_name) as PathSegment[]),
    onExisting: rule.on_existing ?? 'keep',
  }));
}

function checkPath(value: unknown, field: string): string {
  if (typeof value !== 'string') throw invalid(field, 'must be a JSON path such as $.card.number');
  const parsed = parsePath(value);
  if (typeof parsed === 'string') throw invalid(field, parsed);
  return value;
}

function invalid(field: string, message: string): ProblemException {
  return new ProblemException(CommonErrors.validationFailed, `${field} ${message}.`, [
    { location: 'body', name: field, message },
  ]);
}
