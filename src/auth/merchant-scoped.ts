import { applyDecorators } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { ApiProblems } from '../common/openapi/api-problems';
import { AuthErrors } from './auth.errors';

/**
 * OpenAPI for a controller whose routes act inside one merchant account: the merchant-selection
 * headers, and the problems the AuthGuard can answer with on such routes.
 */
export const MerchantScoped = () =>
  applyDecorators(
    ApiHeader({
      name: 'x-merchant-account-id',
      required: false,
      description: 'Merchant account to act for (instance keys; default "default"). A merchant-bound key may send only its own id.',
    }),
    ApiHeader({ name: 'x-gr4vy-merchant-account-id', required: false, description: 'Alias of x-merchant-account-id.' }),
    ApiProblems(AuthErrors.unauthorized, AuthErrors.forbidden, AuthErrors.merchantAccountMismatch, AuthErrors.merchantAccountUnknown),
  );
