import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

/**
 * One data-access convention (docs/architecture.md, "Data access"): every query of a table is in that table's
 * `*.repository.ts`; services, controllers and the rest call repositories. This reads every file of src/ (its
 * comments removed, so a comment naming a query is no query) and fails on a data-access call anywhere else than
 * a repository, platform/database/ (the pool, Sql, the probe, migrations) or the places listed in ALLOWED.
 */
const SRC = resolve(__dirname, '../../src');

/** What counts as data access: a query, a query builder, TypeORM's repositories and data source, Sql. */
const CALLS: Array<{ name: string; pattern: RegExp }> = [
  { name: '.query(', pattern: /\.query\s*[<(]/ },
  { name: 'createQueryBuilder', pattern: /\bcreateQueryBuilder\b/ },
  { name: '@InjectRepository', pattern: /@InjectRepository\b/ },
  { name: 'getRepository', pattern: /\bgetRepository\b/ },
  { name: 'Sql', pattern: /\bSql\b|\.prepared\s*[<(]/ },
  { name: 'DataSource', pattern: /\bDataSource\b|@InjectDataSource\b/ },
  {
    name: 'manager.',
    pattern: /\bmanager\s*\.\s*(query|insert|update|delete|save|remove|find\w*|count\w*|exists\w*|transaction)\b/,
  },
];

/** Where data access belongs: the repositories, and the database's own platform folder (with the migrations). */
const isHome = (path: string) => path.endsWith('.repository.ts') || path.startsWith('platform/database/');

/** Data access elsewhere, each with its reason. A path is a file, or a folder ending in '/'. */
const ALLOWED: Array<{ path: string; why: string }> = [
  { path: 'app/core.module.ts', why: 'the composition root registers Sql and DatabaseProbe for every module' },
  { path: 'main.ts', why: 'the API hands TypeORM’s DataSource to the migrations at start' },
  {
    path: 'cli/cli-support.ts',
    why: 'the CLI hands TypeORM’s DataSource to the migrations (`migrate`, `migrate status`)',
  },
  {
    path: 'platform/pagination/keyset.ts',
    why: 'the one keyset query of every list: the KeysetTable a repository holds runs it through Sql (decision 0128)',
  },
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The code of a file without its comments. */
function code(text: string): string {
  const source = ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  return ts.createPrinter({ removeComments: true }).printFile(source);
}

/** `path: call` for each kind of data-access call in the file, when the file is not where data access belongs. */
function dataAccessCalls(path: string, text: string): string[] {
  if (isHome(path)) return [];
  const stripped = code(text);
  return CALLS.filter(({ pattern }) => pattern.test(stripped)).map(({ name }) => `${path}: ${name}`);
}

const allowedFor = (path: string) =>
  ALLOWED.find((entry) => (entry.path.endsWith('/') ? path.startsWith(entry.path) : path === entry.path));

describe('data access', () => {
  const found = sources(SRC).flatMap((file) => {
    const path = relative(SRC, file);
    return dataAccessCalls(path, readFileSync(file, 'utf8')).map((call) => ({ path, call }));
  });

  it('is only in *.repository.ts files and platform/database/, the listed places apart', () => {
    expect(found.filter(({ path }) => !allowedFor(path)).map(({ call }) => call)).toEqual([]);
  });

  it('lists no place that has no data access any more', () => {
    const stale = ALLOWED.filter((entry) => !found.some(({ path }) => allowedFor(path) === entry));
    expect(stale.map((entry) => entry.path)).toEqual([]);
  });

  describe('the check itself, on made-up files', () => {
    it('finds each kind of call in a service, and none in a repository', () => {
      const service = [
        "import { DataSource, Repository } from 'typeorm';",
        'class S {',
        '  constructor(@InjectRepository(A) private readonly a: Repository<A>, private readonly sql: Sql,',
        '    private readonly db: DataSource) {}',
        "  m() { return this.a.query<unknown[]>('SELECT 1'); }",
        "  n() { return this.a.createQueryBuilder('a').getMany(); }",
        "  o() { return this.sql.prepared('x', 'SELECT 1', []); }",
        '  p() { return this.db.transaction((manager) => manager.insert(A, {})); }',
        '  q() { return this.db.getRepository(A); }',
        '}',
      ].join('\n');
      expect(dataAccessCalls('modules/x/x.service.ts', service)).toEqual([
        'modules/x/x.service.ts: .query(',
        'modules/x/x.service.ts: createQueryBuilder',
        'modules/x/x.service.ts: @InjectRepository',
        'modules/x/x.service.ts: getRepository',
        'modules/x/x.service.ts: Sql',
        'modules/x/x.service.ts: DataSource',
        'modules/x/x.service.ts: manager.',
      ]);
      expect(dataAccessCalls('modules/x/x.repository.ts', service)).toEqual([]);
      expect(dataAccessCalls('platform/database/migrations/1-X.ts', service)).toEqual([]);
    });

    it('reads no comment and no look-alike as a call', () => {
      const text = [
        '/** Reads through the repository, which runs `this.rows.query(...)` (Sql, a DataSource). */',
        '// manager.query(...) and createQueryBuilder are the repository’s',
        'const querySelector = (q: { query: string }) => q.query;',
        'const sqlText = "SELECT 1";',
      ].join('\n');
      expect(dataAccessCalls('modules/x/x.service.ts', text)).toEqual([]);
    });
  });
});
