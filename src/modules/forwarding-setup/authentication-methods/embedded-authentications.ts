import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { ConfigAuthentications, MAX_EMBEDDED_AUTHENTICATIONS } from '../configs/config-authentications';
import { ForwardAuthenticationResponse } from './dto/forward-authentication.dto';
import { ForwardAuthenticationsRepository } from './forward-authentications.repository';
import { ForwardAuthenticationsService } from './forward-authentications.service';

/** Config answers' `authentications[]`: one query for every config of the answer, each method in its own shape. */
@Injectable()
export class EmbeddedAuthentications extends ConfigAuthentications {
  constructor(
    private readonly rows: ForwardAuthenticationsRepository,
    private readonly methods: ForwardAuthenticationsService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    super();
  }

  async embedded(merchantAccountId: string, configIds: readonly string[]): Promise<Map<string, object[]>> {
    const byConfig = new Map<string, object[]>(configIds.map((id) => [id, []]));
    if (configIds.length === 0) return byConfig;
    const rows = await this.rows.newestOf(merchantAccountId, configIds, MAX_EMBEDDED_AUTHENTICATIONS);
    // Gr4vy-shaped methods are answered with their config's definition: one lookup per config that has any.
    const definitions = new Map<string, Awaited<ReturnType<ForwardAuthenticationsService['definitionsByKind']>>>();
    for (const configId of new Set(rows.filter((r) => r.shape === 'gr4vy').map((r) => r.configId)))
      definitions.set(configId, await this.methods.definitionsByKind(merchantAccountId, configId));
    const readAtMs = this.clock.epochMs();
    for (const row of rows) {
      const definition = definitions.get(row.configId)?.get(row.kind);
      byConfig.get(row.configId)?.push(ForwardAuthenticationResponse.from({ ...row, readAtMs, definition }));
    }
    return byConfig;
  }
}
