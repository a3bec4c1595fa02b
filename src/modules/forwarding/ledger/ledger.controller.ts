import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { CommonErrors } from '../../../platform/problem/common.errors';
import {
  LedgerConsistencyQuery,
  LedgerConsistencyResponse,
  LedgerHeadResponse,
  LedgerRecordProofResponse,
} from './dto/ledger.dto';
import { LedgerErrors } from './ledger.errors';
import { LedgerHeadEntity } from './ledger-head.entity';
import { LedgerService } from './ledger.service';

/**
 * The disclosure ledger's routes (decisions 0133, 0143): the merchant's own signed heads and the proofs that check
 * against them.
 */
@ApiTags('Ledger')
@MerchantScoped()
@Controller('vault-forward')
export class LedgerController {
  constructor(private readonly ledger: LedgerService) {}

  @Get('ledger/heads')
  @RequireScope('vault-forwards.read')
  @ApiOperation({
    summary: 'List the signed tree heads of the merchant’s own ledger tree, newest first, with cursor pagination',
  })
  @Paginated({ default: 20, max: 100, scope: 'vault-forward-ledger-heads', item: LedgerHeadResponse })
  heads(@MerchantAccountId() merchant: string, @Keyset() keyset: KeysetRequest): Promise<LedgerHeadEntity[]> {
    return this.ledger.heads(merchant, keyset);
  }

  @Get('ledger/consistency')
  @RequireScope('vault-forwards.read')
  @ApiOperation({ summary: 'An RFC 9162 consistency proof between two signed heads of the merchant’s own tree' })
  @ApiOkResponse({ type: LedgerConsistencyResponse })
  @ApiProblems(
    CommonErrors.validationFailed,
    LedgerErrors.headNotFound,
    LedgerErrors.headsOutOfOrder,
    LedgerErrors.purged,
    LedgerErrors.inconsistent,
  )
  consistency(
    @MerchantAccountId() merchant: string,
    @Query() query: LedgerConsistencyQuery,
  ): Promise<LedgerConsistencyResponse> {
    return this.ledger.consistency(merchant, query.from, query.to);
  }

  @Get('requests/:id/proof')
  @RequireScope('vault-forwards.read')
  @ApiOperation({
    summary:
      'The ledger entries of a forward with their RFC 9162 inclusion proofs against the merchant’s latest signed head',
  })
  @ApiOkResponse({ type: LedgerRecordProofResponse })
  @ApiProblems(LedgerErrors.notInLedger, LedgerErrors.notSealed, LedgerErrors.purged, LedgerErrors.inconsistent)
  proof(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<LedgerRecordProofResponse> {
    return this.ledger.recordProof(merchant, id);
  }
}
