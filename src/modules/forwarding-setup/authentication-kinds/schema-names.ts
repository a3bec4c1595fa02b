import type { AuthenticationKind } from './kinds';

/**
 * The OpenAPI component names of a kind's request and response schemas
 * (modules/forwarding-setup/authentication-methods/openapi.ts builds them).
 */
function pascal(kind: AuthenticationKind): string {
  return kind
    .split('-')
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');
}

export function requestSchemaName(kind: AuthenticationKind): string {
  return `ForwardAuthentication${pascal(kind)}Request`;
}

export function responseSchemaName(kind: AuthenticationKind): string {
  return `ForwardAuthentication${pascal(kind)}Response`;
}

/** Gr4vy's shape of a method, answered for the methods made in it. */
export const GR4VY_RESPONSE_SCHEMA_NAME = 'ForwardAuthenticationGr4vyResponse';
