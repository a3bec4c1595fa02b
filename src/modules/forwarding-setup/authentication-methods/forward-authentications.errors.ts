import { CommonErrors } from '../../../platform/problem/common.errors';
import { defineProblem, ProblemException, type ProblemFieldError } from '../../../platform/problem/problem';
import type { AuthenticationKind } from '../authentication-kinds/kinds';

export const ForwardAuthenticationErrors = {
  notFound: defineProblem({
    code: 'vault-forward-authentication-not-found',
    status: 404,
    title: 'Authentication method not found',
    description:
      'No authentication method with this id exists for this forwarding config in the merchant account of the request.',
  }),
  notUsable: defineProblem({
    code: 'authentication-method-not-usable',
    status: 422,
    title: 'Authentication method not usable for this forward',
    description:
      'An id in x-vault-forward-authentications is not an authentication method of the forwarding config that ' +
      'enables the target, in the merchant account of the request (unknown, deleted, another config’s or another ' +
      'merchant’s). The problem names the id. Nothing was sent.',
  }),
  conflict: defineProblem({
    code: 'authentication-methods-conflict',
    status: 422,
    title: 'Authentication methods cannot be combined',
    description:
      'x-vault-forward-authentications lists the same method twice, or two mutual-tls methods (a connection has ' +
      'one client certificate). Nothing was sent.',
  }),
  unreadable: defineProblem({
    code: 'authentication-method-unreadable',
    status: 500,
    title: 'Authentication method could not be decrypted',
    description:
      'The stored secret of an authentication method does not decrypt with the configured master keys (moved, ' +
      'tampered, or its master key removed). The problem names the method id. Nothing was sent.',
  }),
  invalid: defineProblem({
    code: 'authentication-method-invalid',
    status: 422,
    title: 'Authentication method cannot be applied',
    description:
      'An authentication method’s material cannot be used (a key or certificate that does not parse, a public ' +
      'key unfit for the algorithm). The create or update answer warned about it; replace its fields. The ' +
      'problem names the method id. Nothing was sent.',
  }),
};

/** A 400 naming every field of a method that does not describe a valid one of its kind. */
export function throwIfAny(kind: AuthenticationKind, errors: ProblemFieldError[]): void {
  if (errors.length === 0) return;
  throw new ProblemException(
    CommonErrors.validationFailed,
    `fields do not describe a valid ${kind} method: ${errors.map((e) => `${e.name} ${e.message}`).join('; ')}.`,
    errors,
  );
}

/** The 404 of an unknown method id (at most 64 characters of it echoed). */
export function notFound(id: string): ProblemException {
  return new ProblemException(
    ForwardAuthenticationErrors.notFound,
    `No authentication method "${id.slice(0, 64)}" exists for this forwarding config.`,
  );
}
