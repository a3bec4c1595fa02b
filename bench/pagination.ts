/**
 * npm run bench:pagination — keyset vs OFFSET on 1,000,000 buyers of one merchant, measured side by
 * side in one run on the local PostgreSQL (a scratch database, dropped at the end).
 *
 * All cases go through the same TypeORM query builder and entity hydration; only the seek differs.
 * The keyset pages are what GET /buyers serves: the interceptor's two ends (PaginationService) around
 * BuyersRepository's query, without HTTP.
 * The deep cursor is reached by really walking 5,000 pages, which also checks the walk.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { CursorCodec } from '../src/platform/pagination/cursor';
import { PaginationService } from '../src/platform/pagination/pagination.service';
import { Buyer } from '../src/modules/payments/buyers/buyer.entity';
import { BuyersRepository } from '../src/modules/payments/buyers/buyers.repository';
import { BuyerResponse } from '../src/modules/payments/buyers/dto/buyer.dto';
import { createDataSource } from '../src/platform/database/data-source';
import { runMigrations } from '../src/platform/database/migrate';
import { interleaved, table, benchSql } from './support';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const LIMIT = 20;
const DEPTH_PAGES = 5_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);

async function main(): Promise<void> {
  const admin = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const name = `vault_forward_bench_${Date.now()}`;
  const client = new Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const db = createDataSource({ url: url.toString(), poolSize: 2, entities: [Buyer] });
  try {
    await db.initialize();
    await runMigrations(db);
    await db.query(`INSERT INTO merchant_accounts (id, display_name) VALUES ('bench', 'Bench')`);

    let t = Date.now();
    // Spread over ~11 days with sub-millisecond steps and some exact ties, like real traffic.
    await db.query(
      `INSERT INTO buyers (merchant_account_id, display_name, created_at, updated_at)
       SELECT 'bench', 'Buyer ' || g, ts, ts
         FROM generate_series(1, $1::int) g,
              LATERAL (SELECT timestamptz '2026-01-01' + ((g / 3) * interval '1 second')
                                                       + ((g % 1000) * interval '1 microsecond') AS ts) x`,
      [ROWS],
    );
    await db.query('ANALYZE buyers');
    console.log(`seeded ${ROWS.toLocaleString('en')} buyers in ${((Date.now() - t) / 1000).toFixed(1)} s`);

    const repository = new BuyersRepository(db.getRepository(Buyer), benchSql(db, url.toString()));
    const pagination = new PaginationService(new CursorCodec(randomBytes(32)));
    const scope = { endpoint: 'buyers', merchantAccountId: 'bench', filters: {} };
    const buyers = {
      async list(cursor?: string) {
        const keyset = pagination.keyset(scope, { cursor, limit: LIMIT }, { default: 20, max: 100 });
        return pagination.envelope(scope, keyset, await repository.page('bench', {}, keyset), BuyerResponse.from);
      },
    };

    t = Date.now();
    let cursor: string | undefined;
    let walked = 0;
    for (let page = 1; page <= DEPTH_PAGES; page++) {
      const result = await buyers.list(cursor);
      walked += result.items.length;
      cursor = result.next_cursor ?? undefined;
    }
    if (walked !== DEPTH_PAGES * LIMIT || !cursor) throw new Error(`walk went wrong: ${walked} rows`);
    console.log(
      `walked ${DEPTH_PAGES} pages (${walked.toLocaleString('en')} rows) to get the deep cursor in ` +
        `${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
    const deepCursor = cursor;

    const offsetPage = (offset: number) =>
      db
        .getRepository(Buyer)
        .createQueryBuilder('b')
        .where('b.merchant_account_id = :m', { m: 'bench' })
        .orderBy('b.created_at', 'DESC')
        .addOrderBy('b.id', 'DESC')
        .offset(offset)
        .limit(LIMIT + 1)
        .getMany();

    // The deep keyset page and the deep OFFSET page must be the same rows, or the comparison is void.
    const [keysetDeep, offsetDeep] = [await buyers.list(deepCursor), await offsetPage(DEPTH_PAGES * LIMIT)];
    const same =
      keysetDeep.items.map((b) => b.id).join() ===
      offsetDeep
        .slice(0, LIMIT)
        .map((b) => b.id)
        .join();
    if (!same) throw new Error('keyset and OFFSET disagree on the deep page');

    const results = await interleaved(
      {
        'keyset page 1': () => buyers.list(),
        [`keyset page ${DEPTH_PAGES + 1}`]: () => buyers.list(deepCursor),
        'OFFSET page 1': () => offsetPage(0),
        [`OFFSET page ${DEPTH_PAGES + 1}`]: () => offsetPage(DEPTH_PAGES * LIMIT),
      },
      ROUNDS,
    );
    const m = (k: string) => results[k].median;
    console.log(`\n${ROWS.toLocaleString('en')} buyers, limit ${LIMIT}, ${ROUNDS} interleaved rounds after warm-up\n`);
    console.log(table(results));
    const keysetRatio = m(`keyset page ${DEPTH_PAGES + 1}`) / m('keyset page 1');
    console.log(
      `\nkeyset deep/first (median): ${keysetRatio.toFixed(2)}  (target ≤ 1.3: ${keysetRatio <= 1.3 ? 'met' : 'NOT met'})`,
    );
    console.log(`OFFSET deep/first (median): ${(m(`OFFSET page ${DEPTH_PAGES + 1}`) / m('OFFSET page 1')).toFixed(2)}`);
    console.log(
      `OFFSET deep / keyset deep (median): ${(m(`OFFSET page ${DEPTH_PAGES + 1}`) / m(`keyset page ${DEPTH_PAGES + 1}`)).toFixed(1)}×`,
    );
  } finally {
    if (db.isInitialized) await db.destroy();
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
