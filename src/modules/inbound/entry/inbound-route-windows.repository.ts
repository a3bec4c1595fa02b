import { Injectable } from '@nestjs/common';
import { Sql } from '../../../platform/database/sql';

/**
 * Every read and write of inbound_route_windows: the requests a route of kind `none` took in its current fixed
 * window (aligned to its length by the database's clock, so every API process counts into the same row), counted
 * and read in one statement, the route's earlier windows deleted by the same statement.
 */
@Injectable()
export class InboundRouteWindowsRepository {
  constructor(private readonly sql: Sql) {}

  /** Counts one request; the window's count with it, and the seconds until the next window starts. */
  async count(routeId: string, windowSeconds: number): Promise<{ requests: number; retryAfterSeconds: number }> {
    const [row] = await this.sql.prepared<{ requests: number; retry_after: number }>(
      'inbound.count-window',
      `WITH w AS (
         SELECT to_timestamp(floor(extract(epoch FROM now()) / $2::integer) * $2::integer) AS start
       ), gone AS (
         DELETE FROM inbound_route_windows WHERE route_id = $1 AND window_start < (SELECT start FROM w)
       )
       INSERT INTO inbound_route_windows AS r (route_id, window_start, requests)
         SELECT $1, start, 1 FROM w
       ON CONFLICT (route_id, window_start) DO UPDATE SET requests = r.requests + 1
       RETURNING requests,
         ceil(extract(epoch FROM (window_start + make_interval(secs => $2::integer) - now())))::integer AS retry_after`,
      [routeId, windowSeconds],
    );
    return { requests: row.requests, retryAfterSeconds: Math.max(1, row.retry_after) };
  }
}
