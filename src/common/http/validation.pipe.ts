import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { CommonErrors } from '../problem/common.errors';
import { ProblemException, ProblemFieldError, ProblemLocation } from '../problem/problem';

/** Carries field errors out of ValidationPipe until `transform` knows where the value came from. */
class FieldErrors extends Error {
  constructor(readonly fields: Array<Omit<ProblemFieldError, 'location'>>) {
    super('validation failed');
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function flatten(errors: ValidationError[], prefix = ''): Array<Omit<ProblemFieldError, 'location'>> {
  return errors.flatMap((error) => {
    const name = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      name,
      // class-validator starts messages with the property name; keep them readable on their own.
      message: message.replace(new RegExp(`^(property )?${escapeRegExp(error.property)} `), ''),
    }));
    return [...own, ...flatten(error.children ?? [], name)];
  });
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
    if (metadata.type === 'body' && (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value))) {
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
