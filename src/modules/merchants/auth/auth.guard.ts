import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { Authenticator } from './authenticator.service';
import { RequestWithPrincipal } from '../access/principal';
import { ROUTE_ACCESS, RouteAccess } from '../access/scopes';

/**
 * Global guard: every route is authenticated unless marked @Public(); a route with no access
 * declaration at all is refused (fail closed), so forgetting a decorator cannot open a route.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: Authenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = this.reflector.getAllAndOverride<RouteAccess | undefined>(ROUTE_ACCESS, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (access?.kind === 'public') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest & RequestWithPrincipal>();
    request.principal = await this.authenticator.authenticate(request.headers, access);
    return true;
  }
}
