import { applyDecorators } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';

/** Documents the merchant-selection headers on merchant-scoped controllers. */
export const MerchantHeaders = () =>
  applyDecorators(
    ApiHeader({
      name: 'x-merchant-account-id',
      required: false,
      description: 'Merchant account to act for (instance keys; default "default"). A merchant-bound key may send only its own id.',
    }),
    ApiHeader({ name: 'x-gr4vy-merchant-account-id', required: false, description: 'Alias of x-merchant-account-id.' }),
  );
