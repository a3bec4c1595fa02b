import type { ProblemFieldError } from '../../../platform/problem/problem';
import { AuthenticationKind } from '../authentication-kinds/kinds';
import { fieldErrors } from '../authentication-kinds/method-fields';
import type { AuthenticationDefinition } from './definition';

/**
 * Gr4vy's `fields: [{key, value}]` of an authentication method, read against the definition's
 * authentication (its keys, which are required or secret, and which field of ours each fills). Every
 * error names `fields.<key>`; none quotes a value.
 */

/** At most one entry per field of ours, and our kinds have at most 7. */
const MAX_ENTRIES = 20;

function error(name: string, message: string): ProblemFieldError {
  return { location: 'body', name, message };
}

/** `fields` as sent → key → value, with the errors of its shape and of keys the definition does not have. */
export function readEntries(
  fields: unknown,
  auth: AuthenticationDefinition,
  definitionId: string,
): { entries: Map<string, string>; errors: ProblemFieldError[] } {
  const entries = new Map<string, string>();
  if (!Array.isArray(fields)) return { entries, errors: [error('fields', 'must be an array of {key, value}')] };
  if (fields.length > MAX_ENTRIES)
    return { entries, errors: [error('fields', `must have at most ${MAX_ENTRIES} entries`)] };
  const errors: ProblemFieldError[] = [];
  const known = new Map(auth.fields.map((f) => [f.key, f]));
  fields.forEach((entry: unknown, index) => {
    const { key, value } = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    if (typeof key !== 'string' || typeof value !== 'string' || Object.keys(entry as object).length !== 2) {
      errors.push(error(`fields[${index}]`, 'must be {key, value}, both strings, and nothing else'));
      return;
    }
    const name = `fields.${key.slice(0, 64)}`;
    const field = known.get(key);
    if (!field) {
      errors.push(
        error(
          name,
          `is not a field of ${auth.kind} in ${definitionId}; its fields are ${[...known.keys()].join(', ')}`,
        ),
      );
    } else if (entries.has(key)) errors.push(error(name, 'is listed twice'));
    else if (field.format === 'number' && value !== '' && !/^-?[0-9]+(\.[0-9]+)?$/.test(value))
      errors.push(error(name, 'must be a number'));
    else entries.set(key, value);
  });
  return { entries, errors };
}

/**
 * Our fields for the method: the definition's settings, the current values (on update), then the
 * entries (`""` unsets an optional field). The errors name the definition's keys: a required key
 * missing or unset, and our own rules on each value.
 */
export function ourFields(
  auth: AuthenticationDefinition,
  kind: AuthenticationKind,
  entries: Map<string, string>,
  current: Readonly<Record<string, string>> = {},
): { fields: Record<string, string>; errors: ProblemFieldError[] } {
  const fields: Record<string, string> = { ...current, ...auth.settings };
  const errors: ProblemFieldError[] = [];
  const keyOf = new Map<string, string>();
  for (const field of auth.fields) {
    keyOf.set(field.maps_to, field.key);
    const value = entries.get(field.key);
    if (value === '') {
      if (field.required) errors.push(error(`fields.${field.key}`, 'is required; it cannot be unset'));
      delete fields[field.maps_to];
    } else if (value !== undefined) fields[field.maps_to] = value;
    else if (field.required && fields[field.maps_to] === undefined)
      errors.push(error(`fields.${field.key}`, 'is required'));
  }
  for (const e of fieldErrors(kind, fields)) {
    const ours = e.name.slice('fields.'.length);
    const key = keyOf.get(ours);
    // A missing required field is reported above by its key; one no key fills is the definition's gap.
    if (e.message === 'is required') {
      if (!key) errors.push(error('fields', `the definition fills no ${ours}, which ${kind} requires`));
      continue;
    }
    errors.push(error(key ? `fields.${key}` : 'fields', e.message));
  }
  return { fields, errors };
}

/** The non-secret fields as Gr4vy returns them: `[{key, value}]`, by the definition's keys. */
export function gr4vyFields(
  auth: AuthenticationDefinition | undefined,
  stored: Readonly<Record<string, string>>,
): Array<{ key: string; value: string }> {
  if (!auth) return Object.entries(stored).map(([key, value]) => ({ key, value }));
  return auth.fields
    .filter((f) => !f.secret && stored[f.maps_to] !== undefined)
    .map((f) => ({ key: f.key, value: stored[f.maps_to] }));
}

/** Our field name → the definition's key, for warnings and details. */
export function keyFor(auth: AuthenticationDefinition | undefined, ours: string): string {
  return auth?.fields.find((f) => f.maps_to === ours)?.key ?? ours;
}
