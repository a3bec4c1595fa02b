import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { CommonErrors } from '../problem/common.errors';
import { ProblemException, ProblemFieldError, ProblemLocation } from '../problem/problem';

/** Carries field errors out of ValidationPipe until `transform` knows where the value came from. */
class FieldErrors extends Error {
  constructor(readonly fields: Array<Omit<ProblemFieldError, 'location'>>) {
    super('validation failed');
  }
}

/**
 * The message without its leading `property NAME ` or `NAME `. Plain string compares: a regular
 * expression built from a 500 KB field name is too large for V8, which made that request a 500.
 */
function withoutProperty(message: string, property: string): string {
  for (const prefix of [`property ${property} `, `${property} `]) {
    if (message.startsWith(prefix)) return message.slice(prefix.length);
  }
  return message;
}

function flatten(errors: ValidationError[], prefix = ''): Array<Omit<ProblemFieldError, 'location'>> {
  return errors.flatMap((error) => {
    const name = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      name,
      // class-validator starts messages with the property name; keep them readable on their own.
      message: withoutProperty(message, error.property),
    }));
    return [...own, ...flatten(error.children ?? [], name)];
  });
}

/** Past this depth a value is not walked (bodies deeper than 64 levels never parse: api-app.ts). */
const MAX_WALK_DEPTH = 100;

/** How many offending strings one problem lists; the rest would only repeat the point. */
const MAX_REPORTED = 10;

/**
 * The longest key of any object in a body, query or path parameter. Our own field names are far
 * shorter; free-form objects (metadata, a method's fields, a definition's settings) hold names and
 * header names, which their own checks bound further (decision 0115).
 */
export const MAX_KEY_LENGTH = 256;

/** What PostgreSQL cannot store in a string, or null: a NUL or a lone UTF-16 surrogate. */
function unstorable(text: string): string | null {
  if (text.includes('\u0000')) return 'a NUL character (U+0000)';
  if (!(text as unknown as { isWellFormed(): boolean }).isWellFormed()) return 'a lone UTF-16 surrogate';
  return null;
}

/** A key as a field name may show it: a NUL or lone surrogate written as its `\uXXXX` escape. */
function shownKey(key: string): string {
  if (unstorable(key) === null) return key;
  return key.replace(
    // eslint-disable-next-line no-control-regex -- matching the NUL is the point
    /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Strings PostgreSQL cannot store, wherever they are in a body, query or path parameter: a NUL
 * (text refuses 0x00) or a lone UTF-16 surrogate (no UTF-8 encoding; it would reach the database as
 * U+FFFD, or be refused). Checked here once for every route, before any DTO, rather than per field:
 * a column that forgot the check would otherwise fail as a 500. Keys are checked as values are, and
 * bounded: a free-form object (metadata) is stored as jsonb with its keys. Names are the DTO's dotted
 * paths, a key's unstorable characters escaped.
 */
function unstorableStrings(
  value: unknown,
  name: string,
  depth = 0,
  found: Array<Omit<ProblemFieldError, 'location'>> = [],
) {
  if (found.length >= MAX_REPORTED || depth > MAX_WALK_DEPTH) return found;
  if (typeof value === 'string') {
    const problem = unstorable(value);
    if (problem) found.push({ name, message: `must not contain ${problem}` });
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (found.length >= MAX_REPORTED) break;
      const child = name ? `${name}.${shownKey(key)}` : shownKey(key);
      const problem = unstorable(key);
      if (problem) found.push({ name: child, message: `must not contain ${problem} in its name` });
      else if (key.length > MAX_KEY_LENGTH)
        found.push({ name: child, message: `must have a name of at most ${MAX_KEY_LENGTH} characters` });
      unstorableStrings(item, child, depth + 1, found);
    }
  }
  return found;
}

const LOCATIONS: Partial<Record<ArgumentMetadata['type'], ProblemLocation>> = {
  body: 'body',
  query: 'query',
  param: 'path',
};

/**
 * class-validator DTO validation rendered as one `validation-failed` problem listing every offending
 * field with where it came from. Unknown body fields are refused rather than silently ignored.
 */
@Injectable()
export class ProblemValidationPipe extends ValidationPipe {
  constructor() {
    super({
      transform: true,
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new FieldErrors(flatten(errors)),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const location = LOCATIONS[metadata.type];
    if (location) {
      const unstorable = unstorableStrings(value, metadata.data ?? '');
      if (unstorable.length > 0) {
        const errors = unstorable.map((field) => ({ location, name: field.name || location, message: field.message }));
        throw new ProblemException(
          CommonErrors.validationFailed,
          `${errors.map((e) => `${e.name} ${e.message}`).join('; ')}.`,
          errors,
        );
      }
    }
    if (
      metadata.type === 'body' &&
      (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value))
    ) {
      if (metadata.metatype && this.toValidate(metadata)) {
        throw new ProblemException(CommonErrors.validationFailed, 'The request body must be a JSON object.', [
          { location: 'body', name: 'body', message: 'must be a JSON object' },
        ]);
      }
    }
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (!(error instanceof FieldErrors)) throw error;
      const location = LOCATIONS[metadata.type] ?? 'body';
      // One entry per distinct complaint: several constraints may share a message (limit=abc).
      const unique = new Map(error.fields.map((field) => [`${field.name}\n${field.message}`, field]));
      const errors = [...unique.values()].map((field) => ({ location, ...field }));
      const detail = errors.map((e) => `${e.name} ${e.message}`).join('; ');
      throw new ProblemException(CommonErrors.validationFailed, `${detail}.`, errors);
    }
  }
}
