import { applyDecorators } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { AuthErrors } from '../access/auth.errors';
import { DEFAULT_MERCHANT_ACCOUNT_ID, MERCHANT_HEADER, MERCHANT_HEADER_ALIAS } from './authenticator.service';

/**
 * OpenAPI for a controller whose routes act inside one merchant account: the merchant-selection
 * headers, and the problems the AuthGuard can answer with on such routes.
 */
export const MerchantScoped = () =>
  applyDecorators(
    ApiHeader({
      name: MERCHANT_HEADER,
      required: false,
      description:
        `Merchant account to act for (instance keys; default "${DEFAULT_MERCHANT_ACCOUNT_ID}"). A merchant-bound ` +
        `key may send only its own id.`,
    }),
    ApiHeader({ name: MERCHANT_HEADER_ALIAS, required: false, description: `Alias of ${MERCHANT_HEADER}.` }),
    // validation-failed: a malformed merchant account id, or the two headers disagreeing.
    ApiProblems(
      AuthErrors.unauthorized,
      AuthErrors.forbidden,
      AuthErrors.merchantAccountMismatch,
      AuthErrors.merchantAccountUnknown,
      CommonErrors.validationFailed,
    ),
  );
