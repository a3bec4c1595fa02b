import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient, QueryResultRow } from 'pg';
import { DataSource, Driver } from 'typeorm';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';

/**
 * Named, prepared queries on a connection of TypeORM's own pg pool, for the forwarding hot path: no
 * query runner, no entity hydration, and PostgreSQL parses and plans each statement once per connection.
 * Same pool, same connection settings (UTC, microsecond timestamps) as everything else. The connection
 * comes from the driver's public `obtainMasterConnection` (pg's `pool.connect`), not from the pool
 * object itself, which is the driver's internal state (docs/decisions.md, "Node.js 24 and current majors").
 *
 * Behind PgBouncer in transaction mode (DATABASE_TRANSACTION_POOLING) the statements are unnamed: a named
 * statement lives on one server connection, which the pooler gives to other clients between transactions,
 * so one client's Parse finds another's "p1" already there and another's Bind finds none (decision 0108).
 */
@Injectable()
export class Sql {
  private readonly driver: Driver;
  private readonly named: boolean;

  constructor(@InjectDataSource() dataSource: DataSource, @Inject(APP_CONFIG) config: AppConfig) {
    this.driver = dataSource.driver;
    this.named = !config.database.transactionPooling;
  }

  async prepared<Row extends QueryResultRow>(name: string, text: string, values: unknown[]): Promise<Row[]> {
    const [client, release] = (await this.driver.obtainMasterConnection()) as [PoolClient, (error?: Error) => void];
    // As pg's pool.query does. A checked-out client has no error listener of the pool's, and a connection lost
    // mid-query (PostgreSQL killed, a cut network) emits 'error': unheard, that would crash the process. A
    // connection whose query failed is closed rather than reused (release with the error), so one left in an
    // unknown state never serves another query.
    let released = false;
    const done = (error?: Error) => {
      if (released) return;
      released = true;
      client.removeListener('error', done);
      release(error);
    };
    client.once('error', done);
    try {
      const result = await client.query<Row>(this.named ? { name, text, values } : { text, values });
      done();
      return result.rows;
    } catch (error) {
      done(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
  }
}
