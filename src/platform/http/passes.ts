import { ValidateBy } from 'class-validator';

/**
 * A class-validator decorator from a rule written as a plain function (why a value is refused, or null):
 * the function stays usable where no DTO is involved, and its message, which never repeats the value,
 * is the one the 400 names the field with.
 */
export function Passes(name: string, problem: (value: unknown) => string | null): PropertyDecorator {
  return ValidateBy({
    name,
    validator: {
      validate: (value: unknown) => problem(value) === null,
      defaultMessage: (args) => problem(args?.value) ?? 'is invalid',
    },
  });
}
