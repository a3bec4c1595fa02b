import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension } from '@nestjs/swagger';

/**
 * Scope names follow the public API the spec comes from, so tokens minted by its SDKs (which default
 * to `*.read` and `*.write`) work unchanged. A route needs exactly one scope; `*.read` / `*.write`
 * grant every scope with that action.
 */
type Scope =
  | 'buyers.read'
  | 'buyers.write'
  | 'payment-methods.read'
  | 'payment-methods.write'
  | 'checkout-sessions.read'
  | 'checkout-sessions.write'
  | 'vault-forwards.read'
  | 'vault-forwards.write'
  | 'vault-forward-configs.read'
  | 'vault-forward-configs.write'
  | 'vault-forward-authentications.read'
  | 'vault-forward-authentications.write'
  | 'vault-forward-definitions.read'
  | 'vault-forward-definitions.write'
  | 'vault-forward-budgets.read'
  | 'vault-forward-budgets.write'
  | 'vault-forward-inbound-routes.read'
  | 'vault-forward-inbound-routes.write'
  | 'merchant-accounts.read'
  | 'merchant-accounts.write'
  | 'api-keys.read'
  | 'api-keys.write';

/**
 * Spellings of the official Gr4vy SDK's `JWTScope` that name one of our scopes differently
 * (docs/authentication.md#scope-aliases, decisions/0076): a token minted by the SDK with them is
 * granted ours. Our own spelling stays the canonical one (routes, `x-required-scope`, 403 details).
 */
const SCOPE_ALIASES: Readonly<Record<string, Scope>> = {
  'vault-forward.read': 'vault-forwards.read',
  'vault-forward.write': 'vault-forwards.write',
};

/** Per canonical scope, the alias spellings that grant it (SCOPE_ALIASES turned round, built once). */
const ALIASES_OF = new Map<Scope, string[]>();
for (const [alias, scope] of Object.entries(SCOPE_ALIASES)) {
  ALIASES_OF.set(scope, [...(ALIASES_OF.get(scope) ?? []), alias]);
}

export function scopeGranted(required: Scope, granted: ReadonlySet<string>): boolean {
  if (granted.has(required)) return true;
  const aliases = ALIASES_OF.get(required);
  if (aliases?.some((alias) => granted.has(alias))) return true;
  const action = required.slice(required.lastIndexOf('.') + 1);
  return granted.has(`*.${action}`);
}

export const ROUTE_ACCESS = 'vault-forward:route-access';

export type RouteAccess =
  | { kind: 'public' }
  /** Acts for one merchant account (the key's own, or the one an instance key names). */
  | { kind: 'merchant'; scope: Scope }
  /** Operator routes: instance keys only, no merchant context. */
  | { kind: 'instance'; scope: Scope }
  /**
   * Routes over what keys own (API keys): an instance key acts on the whole instance, a merchant key
   * on its own merchant account only. No merchant is chosen by header; the controller scopes by the
   * key (Principal.keyMerchantAccountId).
   */
  | { kind: 'owner'; scope: Scope };

/** No token needed (health, docs). */
export const Public = () => SetMetadata(ROUTE_ACCESS, { kind: 'public' } satisfies RouteAccess);

/** The route acts inside the caller's merchant account and needs `scope`. */
export const RequireScope = (scope: Scope) =>
  applyDecorators(
    SetMetadata(ROUTE_ACCESS, { kind: 'merchant', scope } satisfies RouteAccess),
    ApiBearerAuth(),
    ApiExtension('x-required-scope', scope),
  );

/** The route is for instance (operator) keys and needs `scope`. */
export const RequireInstanceScope = (scope: Scope) =>
  applyDecorators(
    SetMetadata(ROUTE_ACCESS, { kind: 'instance', scope } satisfies RouteAccess),
    ApiBearerAuth(),
    ApiExtension('x-required-scope', scope),
    ApiExtension('x-instance-key-only', true),
  );

/**
 * The route serves instance keys for the whole instance and merchant keys for their own merchant
 * account, and needs `scope`.
 */
export const RequireOwnerScope = (scope: Scope) =>
  applyDecorators(
    SetMetadata(ROUTE_ACCESS, { kind: 'owner', scope } satisfies RouteAccess),
    ApiBearerAuth(),
    ApiExtension('x-required-scope', scope),
  );
