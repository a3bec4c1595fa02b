import { Controller, Get, Module } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { CurrentPrincipal, MerchantAccountId, Principal } from '../../src/modules/merchants/access/principal';
import { RequireScope } from '../../src/modules/merchants/access/scopes';
import { MerchantScoped } from '../../src/modules/merchants/auth/merchant-scoped';

/**
 * A merchant-scoped route mounted only in tests: it shows which merchant account the AuthGuard
 * resolved, so the guard's rules are tested apart from any one feature's routes.
 */
@MerchantScoped()
@Controller('__probe')
class ProbeController {
  @Get('merchant')
  @RequireScope('buyers.read')
  // Declared like every route, so the e2e response check holds it to its schema too.
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['merchant_account_id', 'key_id'],
      properties: { merchant_account_id: { type: 'string' }, key_id: { type: 'string' } },
    },
  })
  merchant(@MerchantAccountId() merchantAccountId: string, @CurrentPrincipal() principal: Principal) {
    return { merchant_account_id: merchantAccountId, key_id: principal.keyId };
  }
}

@Module({ controllers: [ProbeController] })
export class ProbeModule {}
