import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { VaultForwardDefinition } from './vault-forward-definition.entity';

type DefinitionRow = Pick<VaultForwardDefinition, 'id' | 'displayName' | 'hosts' | 'authentications'>;

/** Every read and write of vault_forward_definitions (the instance's own definitions). */
@Injectable()
export class VaultForwardDefinitionsRepository {
  constructor(@InjectRepository(VaultForwardDefinition) private readonly rows: Repository<VaultForwardDefinition>) {}

  /** By id, `limit` at most. */
  all(limit: number): Promise<VaultForwardDefinition[]> {
    return this.rows.find({ order: { id: 'ASC' }, take: limit });
  }

  find(id: string): Promise<VaultForwardDefinition | null> {
    return this.rows.findOneBy({ id });
  }

  get(id: string): Promise<VaultForwardDefinition> {
    return this.rows.findOneByOrFail({ id });
  }

  count(): Promise<number> {
    return this.rows.count();
  }

  async insert(row: DefinitionRow): Promise<void> {
    await this.rows.insert(row);
  }

  /** Whether the definition was there. */
  async update(row: DefinitionRow): Promise<boolean> {
    const [, affected] = await this.rows.query<[unknown, number]>(
      `UPDATE vault_forward_definitions SET display_name = $2, hosts = $3, authentications = $4, updated_at = now()
        WHERE id = $1`,
      [row.id, row.displayName, row.hosts, JSON.stringify(row.authentications)],
    );
    return affected > 0;
  }

  /** Whether the definition was there. */
  async delete(id: string): Promise<boolean> {
    const result = await this.rows.delete({ id });
    return !!result.affected;
  }
}
