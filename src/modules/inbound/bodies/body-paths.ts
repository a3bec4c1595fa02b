/**
 * How leaves of a body are named, and the mappings that name them (decision 0155): JSON pointers (RFC 6901), XML
 * element paths from the root (`/booking/card/number`), form field names (`cards[0][number]`). A pattern segment
 * `*` matches any one segment (an index, a member, an element), so one mapping covers every card of a list.
 */
export const BODY_FORMATS = ['json', 'xml', 'form'] as const;
export type BodyFormat = (typeof BODY_FORMATS)[number];

export const MAPPED_FIELDS = [
  'card_number',
  'expiration_date',
  'expiration_month',
  'expiration_year',
  'cardholder_name',
  'security_code',
] as const;
export type MappedField = (typeof MAPPED_FIELDS)[number];

/** A route's mappings of one format, as segments. */
export type CompiledMapping = Partial<Record<MappedField, string[]>>;

/** A mapping's segments, as leaves' paths are written: `*` matches any one segment. */
export function patternSegments(format: BodyFormat, path: string): string[] {
  if (format === 'json')
    return path
      .slice(1)
      .split('/')
      .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (format === 'xml') return path.slice(1).split('/');
  return formNameSegments(path);
}

/** A form field name's segments: `cards[0][number]` is cards, 0, number; a name without brackets is one segment. */
export function formNameSegments(name: string): string[] {
  const bracketed = /^([^[\]]+)((?:\[[^[\]]*\])+)$/.exec(name);
  if (!bracketed) return [name];
  return [bracketed[1], ...[...bracketed[2].matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1])];
}

/** Whether a leaf's path is what the pattern names. */
export function matches(pattern: readonly string[], path: readonly string[]): boolean {
  return pattern.length === path.length && pattern.every((segment, i) => segment === '*' || segment === path[i]);
}

/** A path as a problem names it (no value): a JSON pointer, an XML path, a form field name. */
export function shownPath(format: BodyFormat | 'text', path: readonly string[]): string {
  if (format === 'form')
    return path.length === 1
      ? path[0]
      : `${path[0]}${path
          .slice(1)
          .map((s) => `[${s}]`)
          .join('')}`;
  if (format === 'json') return `/${path.map((s) => s.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
  return `/${path.join('/')}`;
}
