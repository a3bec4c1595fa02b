import { Inject, Injectable } from '@nestjs/common';
import { Clock, CLOCK } from '../../../platform/time/clock';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { ProblemException } from '../../../platform/problem/problem';
import { ForwardActivityResponse } from './dto/forward-activity.dto';
import { ForwardRecordEntity } from './forward-record.entity';
import { ForwardRecordErrors } from './forward-records.errors';
import { ForwardRecordsRepository } from './forward-records.repository';
import { SecretSealer } from '../../vault/secret-sealer';
import { openBodies, OpenedBodies } from './sealed-bodies';

/** GET /vault-forward/requests and /{id}: the API's side of the records ForwardRecordsService writes. */
@Injectable()
export class ForwardRecordsReader {
  constructor(
    private readonly records: ForwardRecordsRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly sealer: SecretSealer,
  ) {}

  /** One record with its bodies opened (decision 0104). */
  async get(merchantAccountId: string, id: string): Promise<{ record: ForwardRecordEntity; bodies: OpenedBodies }> {
    // The bodies are not selected by default (the list leaves them out): named here, with every other column.
    const found = id.length <= 128 ? await this.records.find(merchantAccountId, id) : null;
    if (!found)
      throw new ProblemException(
        ForwardRecordErrors.recordNotFound,
        `No forward "${id.slice(0, 64)}" exists in this merchant account.`,
      );
    return { record: found, bodies: openBodies(this.sealer, found) };
  }

  async activity(merchantAccountId: string, minutes: number): Promise<ForwardActivityResponse> {
    const rows = await this.records.activity(merchantAccountId, minutes, this.clock.now());
    return {
      type: 'vault-forward-activity',
      from: rows[0].minute.toISOString(),
      until: rows[rows.length - 1].until.toISOString(),
      minutes: rows.map((row) => ({
        minute: row.minute.toISOString(),
        succeeded: Number(row.succeeded),
        downstream_error: Number(row.downstream_error),
        failed: Number(row.failed),
        pending: Number(row.pending),
      })),
    };
  }

  /** One page, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  list(merchantAccountId: string, keyset: KeysetRequest): Promise<ForwardRecordEntity[]> {
    return this.records.page(merchantAccountId, keyset);
  }
}
