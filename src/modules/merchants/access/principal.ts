import { createParamDecorator, ExecutionContext } from '@nestjs/common';

/** Who is calling, established by the AuthGuard and attached to the request. */
export interface Principal {
  keyId: string;
  /** The key's own merchant account, or null for an instance key. */
  keyMerchantAccountId: string | null;
  scopes: ReadonlySet<string>;
  /** The merchant account this request acts for; null on instance-only routes. */
  merchantAccountId: string | null;
}

export interface RequestWithPrincipal {
  principal?: Principal;
}

export const CurrentPrincipal = createParamDecorator((_data: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<RequestWithPrincipal>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route the AuthGuard did not authenticate');
  return principal;
});

/** The merchant account id every query of a merchant route is scoped to. */
export const MerchantAccountId = createParamDecorator((_data: unknown, ctx: ExecutionContext): string => {
  const id = ctx.switchToHttp().getRequest<RequestWithPrincipal>().principal?.merchantAccountId;
  if (!id) throw new Error('MerchantAccountId used on a route without merchant context');
  return id;
});
