import type { EntityMetadata, ObjectLiteral } from 'typeorm';
import type { Sql } from '../database/sql';
import type { Timestamp } from '../database/timestamp';
import type { DecodedCursor, KeysetPosition } from './cursor';

/** A listed row: every paged table is ordered by (created_at, id). */
export interface KeysetRow extends ObjectLiteral {
  id: string;
  createdAt: Timestamp;
}

/** What a paginated handler is given: how many rows it may show, and where the page starts. */
export interface KeysetRequest {
  limit: number;
  /** null for the first page. */
  cursor: DecodedCursor | null;
}

/** A condition of a list's query: SQL with a `?` where each of `values` goes, in order. */
export interface Condition {
  sql: string;
  values: unknown[];
}

export function where(sql: string, ...values: unknown[]): Condition {
  return { sql, values };
}

/** An entity read on each row through a LEFT JOIN, put on `property` when the join found a row (leftJoinAndMapOne's way). */
interface KeysetJoin {
  property: string;
  metadata: EntityMetadata;
  alias: string;
  /** The join's ON condition, in the two aliases. */
  on: string;
}

/** The prepared statement's name of each text, the same in every repository of this process. */
const statementNames = new Map<string, string>();

/** One entity's columns, as a SELECT list and back into an entity, exactly as TypeORM hydrates a getMany() row. */
class EntityColumns {
  readonly select: string;
  private readonly columns: Array<{ column: EntityMetadata['columns'][number]; key: string }>;

  constructor(
    private readonly metadata: EntityMetadata,
    private readonly alias: string,
  ) {
    this.columns = metadata.columns
      .filter((column) => column.isSelect && !column.isVirtual)
      .map((column) => ({ column, key: `${alias}_${column.databaseName}` }));
    this.select = this.columns.map(({ column, key }) => `${alias}."${column.databaseName}" AS "${key}"`).join(', ');
  }

  /** The entity, or undefined when every column is null (a LEFT JOIN that found no row). */
  read(raw: Record<string, unknown>): ObjectLiteral | undefined {
    const driver = this.metadata.connection.driver;
    const entity = this.metadata.create() as ObjectLiteral;
    let found = false;
    for (const { column, key } of this.columns) {
      const value = raw[key];
      if (value !== null) found = true;
      column.setEntityValue(entity, driver.prepareHydratedValue(value, column));
    }
    return found ? entity : undefined;
  }
}

/**
 * The one keyset (seek) query of every list, newest first: rows ordered by (created_at DESC, id DESC)
 * — id breaks ties between rows of the same microsecond — and compared with a row-value predicate,
 * which a (merchant_account_id, created_at DESC, id DESC) index serves at any depth. One extra row
 * is fetched to learn whether another page exists: no COUNT, no OFFSET. Each repository that lists its
 * table holds one, and gives it the list's conditions (already scoped to the merchant account).
 *
 * The statement is prepared (`Sql.prepared`): a list's text differs only by which filters were given, so
 * PostgreSQL parses and plans each shape once per connection, and the rows are hydrated from the entity's
 * metadata as TypeORM's getMany() would, without building a query per request (a list of one spent ~15 %
 * of its CPU in TypeORM's query builder; docs/benchmarks.md). Rows come back as fetched (oldest first when
 * walking backwards); `keysetPage` puts them in order.
 */
export class KeysetTable<Row extends KeysetRow> {
  /** Built on the first list: entity metadata is complete only once the data source is initialised. */
  private shape?: { from: string; select: string; own: EntityColumns; joined: EntityColumns | null };

  constructor(
    private readonly sql: Sql,
    private readonly metadata: EntityMetadata,
    private readonly alias: string,
    private readonly join?: KeysetJoin,
  ) {}

  private tableShape(): NonNullable<KeysetTable<Row>['shape']> {
    if (this.shape) return this.shape;
    const { metadata, alias, join } = this;
    const own = new EntityColumns(metadata, alias);
    const joined = join ? new EntityColumns(join.metadata, join.alias) : null;
    this.shape = {
      own,
      joined,
      from: join
        ? `"${metadata.tableName}" ${alias} LEFT JOIN "${join.metadata.tableName}" ${join.alias} ON ${join.on}`
        : `"${metadata.tableName}" ${alias}`,
      select: joined ? `${own.select}, ${joined.select}` : own.select,
    };
    return this.shape;
  }

  async seekPage(conditions: Condition[], keyset: KeysetRequest): Promise<Row[]> {
    const { cursor } = keyset;
    const backwards = cursor?.direction === 'previous';
    const values: unknown[] = [];
    const bind = (condition: Condition): string => {
      let next = 0;
      return condition.sql.replace(/\?/g, () => {
        values.push(condition.values[next++]);
        return `$${values.length}`;
      });
    };
    const predicates = conditions.map(bind);
    const a = this.alias;
    if (cursor) {
      predicates.push(
        bind(
          where(
            `(${a}.created_at, ${a}.id) ${backwards ? '>' : '<'} (CAST(? AS timestamptz), ?)`,
            cursor.position.createdAt,
            cursor.position.id,
          ),
        ),
      );
    }
    const order = backwards ? 'ASC' : 'DESC';
    const { from, select, own, joined } = this.tableShape();
    values.push(keyset.limit + 1);
    const text =
      `SELECT ${select} FROM ${from}` +
      (predicates.length > 0 ? ` WHERE ${predicates.map((p) => `(${p})`).join(' AND ')}` : '') +
      ` ORDER BY ${a}.created_at ${order}, ${a}.id ${order} LIMIT $${values.length}`;
    let name = statementNames.get(text);
    if (name === undefined) {
      name = `keyset-${statementNames.size + 1}`;
      statementNames.set(text, name);
    }
    const raws = await this.sql.prepared<Record<string, unknown>>(name, text, values);
    return raws.map((raw) => {
      const row = own.read(raw) as Row;
      const other = joined?.read(raw);
      if (this.join && other !== undefined) (row as ObjectLiteral)[this.join.property] = other;
      return row;
    });
  }
}

/** One page of rows fetched by `KeysetTable.seekPage`, newest first, and where its neighbours start. */
interface KeysetPage<Row> {
  rows: Row[];
  /** Position of the last row shown, when older rows remain. */
  next: KeysetPosition | null;
  /** Position of the first row shown, when newer rows exist. */
  previous: KeysetPosition | null;
}

export function keysetPage<Row extends KeysetRow>(fetched: Row[], keyset: KeysetRequest): KeysetPage<Row> {
  const { cursor, limit } = keyset;
  const backwards = cursor?.direction === 'previous';
  const more = fetched.length > limit;
  const rows = fetched.slice(0, limit);
  if (backwards) rows.reverse();

  const position = (row: Row): KeysetPosition => ({ createdAt: row.createdAt.toISOString(), id: row.id });
  // An empty page still has neighbours: the cursor's own position stands for both of its edges.
  const first = rows.length > 0 ? position(rows[0]) : cursor?.position;
  const last = rows.length > 0 ? position(rows[rows.length - 1]) : cursor?.position;
  // Walking forward, older rows remain iff we fetched one too many; newer rows exist behind any cursor.
  // Walking backward, it is the other way round.
  const hasNext = backwards ? cursor !== null : more;
  const hasPrevious = backwards ? more : cursor !== null;
  return {
    rows,
    next: hasNext && last ? last : null,
    previous: hasPrevious && first ? first : null,
  };
}
