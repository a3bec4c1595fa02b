import {
  BODY_FORMATS,
  BodyFormat,
  CompiledMapping,
  MAPPED_FIELDS,
  MappedField,
  patternSegments,
} from '../bodies/body-paths';

/**
 * Where a route says card data sits in the bodies it takes, per format (decision 0155). The card-data detector
 * finds card numbers wherever they are, whatever the mappings say; a mapping adds what the detector cannot know:
 * which value is a card's expiry, its holder's name, its security code.
 */
export type FieldMappings = Partial<Record<BodyFormat, Partial<Record<MappedField, string>>>>;

const MAX_PATH_CHARS = 200;
const MAX_SEGMENTS = 32;
const XML_NAME = /^(?:\*|[A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)$/;

/** Why a field_mappings object is refused, or null. */
export function fieldMappingsProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'must be an object of json, xml and form mappings';
  for (const [format, mapping] of Object.entries(value)) {
    if (!(BODY_FORMATS as readonly string[]).includes(format))
      return `${format.slice(0, 40)} is not a format (${BODY_FORMATS.join(', ')})`;
    if (typeof mapping !== 'object' || mapping === null || Array.isArray(mapping))
      return `${format} must be an object naming where each field is`;
    for (const [field, path] of Object.entries(mapping as Record<string, unknown>)) {
      if (!(MAPPED_FIELDS as readonly string[]).includes(field))
        return `${format}.${field.slice(0, 40)} is not a mapped field (${MAPPED_FIELDS.join(', ')})`;
      const problem = pathProblem(format as BodyFormat, path);
      if (problem !== null) return `${format}.${field} ${problem}`;
    }
  }
  return null;
}

function pathProblem(format: BodyFormat, path: unknown): string | null {
  if (typeof path !== 'string' || path.length === 0 || path.length > MAX_PATH_CHARS)
    return `must be a string of 1 to ${MAX_PATH_CHARS} characters`;
  if (format !== 'form' && !path.startsWith('/')) return 'must start with /';
  const segments = patternSegments(format, path);
  if (segments.length > MAX_SEGMENTS) return `must have at most ${MAX_SEGMENTS} segments`;
  if (format === 'json' && /~[^01]|~$/.test(path)) return 'must escape ~ as ~0 and / as ~1 (RFC 6901)';
  if (format === 'xml' && !segments.every((segment) => XML_NAME.test(segment)))
    return 'must be element names (prefix:name allowed) or * between the slashes';
  return null;
}

/** A route's mappings of one format as segments, for the body it reads. */
export function compiledMapping(mappings: FieldMappings, format: BodyFormat): CompiledMapping {
  const out: CompiledMapping = {};
  for (const [field, path] of Object.entries(mappings[format] ?? {}))
    out[field as MappedField] = patternSegments(format, path);
  return out;
}
