import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool, QueryResultRow } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * Named, prepared queries straight on TypeORM's own pg pool, for the forwarding hot path: no query
 * runner, no entity hydration, and PostgreSQL parses and plans each statement once per connection.
 * Same pool, same connection settings (UTC, microsecond timestamps) as everything else.
 */
@Injectable()
export class Sql {
  private readonly pool: Pool;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.pool = (dataSource.driver as PostgresDriver).master as Pool;
  }

  async prepared<Row extends QueryResultRow>(name: string, text: string, values: unknown[]): Promise<Row[]> {
    const result = await this.pool.query<Row>({ name, text, values });
    return result.rows;
  }
}
