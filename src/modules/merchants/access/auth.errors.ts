import { defineProblem, ProblemException } from '../../../platform/problem/problem';

export const AuthErrors = {
  unauthorized: defineProblem({
    code: 'unauthorized',
    status: 401,
    title: 'Missing or invalid access token',
    description:
      'Send `Authorization: Bearer <token>`, a JWT signed (ES512 or ES256) with an API key of this service: ' +
      '`kid` is the key id, and `iat`, `nbf`, `exp` (at most one hour after `iat`), `jti` and `scopes` are set.',
  }),
  forbidden: defineProblem({
    code: 'forbidden',
    status: 403,
    title: 'Missing scope',
    description:
      'The token is valid but does not carry the scope this route requires (or a `*.read` / `*.write` wildcard for it).',
  }),
  merchantAccountMismatch: defineProblem({
    code: 'merchant-account-mismatch',
    status: 403,
    title: 'Merchant account not allowed for this key',
    description:
      'A merchant-bound API key may only act for its own merchant account: `x-merchant-account-id` (or ' +
      '`x-gr4vy-merchant-account-id`) must be absent or equal to it.',
  }),
  instanceKeyRequired: defineProblem({
    code: 'instance-key-required',
    status: 403,
    title: 'Instance key required',
    description: 'This route manages merchant accounts and is open to instance (operator) API keys only.',
  }),
  apiKeyNotFound: defineProblem({
    code: 'api-key-not-found',
    status: 404,
    title: 'API key not found',
    description:
      'No active API key with this id is visible to the caller: it does not exist, was revoked already, or ' +
      'belongs to another merchant account.',
  }),
  merchantAccountUnknown: defineProblem({
    code: 'merchant-account-unknown',
    status: 400,
    title: 'Unknown merchant account',
    description:
      'The merchant account named by `x-merchant-account-id` (or its alias `x-gr4vy-merchant-account-id`; ' +
      '`default` when absent) does not exist.',
  }),
};

/** A 401 that names the Authorization header and asks for a bearer token (RFC 6750). */
export function unauthorized(detail: string): ProblemException {
  return new ProblemException(
    AuthErrors.unauthorized,
    detail,
    [{ location: 'header', name: 'authorization', message: detail }],
    { 'www-authenticate': 'Bearer' },
  );
}
