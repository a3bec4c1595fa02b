import { Controller, Get, Module } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { CurrentPrincipal, MerchantAccountId, Principal } from '../../src/auth/principal';
import { RequireScope } from '../../src/auth/scopes';

/**
 * A merchant-scoped route mounted only in tests: it shows which merchant account the AuthGuard
 * resolved, so the guard's rules are tested apart from any one feature's routes.
 */
@ApiExcludeController()
@Controller('__probe')
class ProbeController {
  @Get('merchant')
  @RequireScope('buyers.read')
  merchant(@MerchantAccountId() merchantAccountId: string, @CurrentPrincipal() principal: Principal) {
    return { merchant_account_id: merchantAccountId, key_id: principal.keyId };
  }
}

@Module({ controllers: [ProbeController] })
export class ProbeModule {}
