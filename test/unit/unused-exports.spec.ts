import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

/**
 * Every export of src/ is imported by some other file of the repository (src/, the tests, the benchmarks, the
 * dashboard, the Secure Fields frames, scripts/): what only its own file uses is not exported, and what nothing uses
 * is not there. Read with the TypeScript compiler, so that a name counts however it is reached: a named or default
 * import, a re-export or `export *`, a namespace import's member, `const { name } = await import(…)` or
 * `require(…)`, `typeof import(…)`.
 */
const ROOT = resolve(__dirname, '../..');
const READERS = ['src', 'test', 'bench', 'dashboard/src', 'secure-fields/src', 'scripts'];
/** Started by node, not imported: what they export has no importer to find. */
const ENTRY_POINTS = ['src/main.ts', 'src/worker.ts', 'src/cli/main.ts', 'src/app/openapi.ts'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  return { ...options, allowJs: true, noEmit: true };
}

/**
 * The exports of the files under `exporters` (paths relative to `root`) that no other file of `program` imports,
 * as "file: name", and each `export * from` that no name is taken through.
 */
function unusedExports(program: ts.Program, root: string, exporters: (file: string) => boolean): string[] {
  const checker = program.getTypeChecker();
  const own = program.getSourceFiles().filter((sf) => !sf.isDeclarationFile && exporters(relative(root, sf.fileName)));
  const exportsOf = new Map<ts.SourceFile, ts.Symbol[]>();
  const names = new Set<string>();
  for (const sf of own) {
    const module = checker.getSymbolAtLocation(sf);
    const exported = module ? checker.getExportsOfModule(module) : [];
    exportsOf.set(sf, exported);
    for (const symbol of exported) names.add(symbol.name);
  }

  // Per symbol, the files that reach it, along the whole chain of re-exports from the importer to the declaration.
  const users = new Map<ts.Symbol, Set<ts.SourceFile>>();
  const use = (symbol: ts.Symbol | undefined, by: ts.SourceFile) => {
    for (let at = symbol; at;) {
      users.set(at, (users.get(at) ?? new Set()).add(by));
      if (!(at.flags & ts.SymbolFlags.Alias)) break;
      const next = checker.getImmediateAliasedSymbol(at);
      at = next === at ? undefined : next;
    }
  };
  // Per `export * from` in a file of src/: the files it re-exports from, and whether a name was taken through it.
  const stars = new Map<ts.ExportDeclaration, { from: ts.SourceFile; used: boolean }>();
  for (const sf of own) {
    for (const statement of sf.statements) {
      if (!ts.isExportDeclaration(statement) || statement.exportClause || !statement.moduleSpecifier) continue;
      const target = checker.getSymbolAtLocation(statement.moduleSpecifier)?.valueDeclaration;
      if (target && ts.isSourceFile(target)) stars.set(statement, { from: target, used: false });
    }
  }
  const throughStar = (importer: ts.SourceFile, node: ts.Identifier, symbol: ts.Symbol | undefined) => {
    const declaration = ts.findAncestor(
      node,
      (n): n is ts.ImportDeclaration | ts.ExportDeclaration => ts.isImportDeclaration(n) || ts.isExportDeclaration(n),
    );
    const specifier = declaration?.moduleSpecifier;
    const module = specifier && checker.getSymbolAtLocation(specifier)?.valueDeclaration;
    const target = symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    for (const [star, entry] of stars) {
      if (star.getSourceFile() !== module || importer === module) continue;
      if (target?.declarations?.some((d) => d.getSourceFile() === entry.from)) entry.used = true;
    }
  };

  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || sf.fileName.includes('/node_modules/')) continue;
    const visit = (node: ts.Node) => {
      if (ts.isIdentifier(node) && (names.has(node.text) || ts.isImportClause(node.parent))) {
        const symbol = checker.getSymbolAtLocation(node);
        use(symbol, sf);
        if (ts.isImportSpecifier(node.parent) || ts.isExportSpecifier(node.parent)) throughStar(sf, node, symbol);
      }
      // `const { name } = await import('./x')` or `= require('./x')`: the name is a property of the module's type.
      if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
        const key = node.propertyName ?? node.name;
        if (ts.isIdentifier(key) && names.has(key.text)) {
          use(checker.getTypeAtLocation(node.parent).getProperty(key.text), sf);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }

  const unused: string[] = [];
  for (const [sf, exported] of exportsOf) {
    const file = relative(root, sf.fileName);
    for (const symbol of exported) {
      // Names that come through `export *` are judged where they are declared, the star below.
      if (!symbol.declarations?.some((d) => d.getSourceFile() === sf)) continue;
      const importers = [...(users.get(symbol) ?? [])].filter((user) => user !== sf);
      if (importers.length === 0) unused.push(`${file}: ${symbol.name}`);
    }
  }
  for (const [star, { used }] of stars) {
    if (!used) unused.push(`${relative(root, star.getSourceFile().fileName)}: ${star.getText()}`);
  }
  return unused.sort();
}

function repositoryProgram(): ts.Program {
  return ts.createProgram(
    READERS.flatMap((dir) => sourceFiles(join(ROOT, dir))),
    compilerOptions(),
  );
}

/** A program of the given files only, read from memory. */
function madeUpProgram(files: Record<string, string>): ts.Program {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const path = (name: string) => join('/made-up', name);
  const text = (fileName: string) => Object.entries(files).find(([name]) => path(name) === fileName)?.[1] ?? undefined;
  return ts.createProgram(
    Object.keys(files).map(path),
    { ...options, types: [] },
    {
      ...host,
      fileExists: (fileName) => text(fileName) !== undefined || host.fileExists(fileName),
      directoryExists: (dir) =>
        Object.keys(files).some((name) => path(name).startsWith(`${dir}/`)) || (host.directoryExists?.(dir) ?? false),
      realpath: (name) => name,
      readFile: (fileName) => text(fileName) ?? host.readFile(fileName),
      getSourceFile: (fileName, version) => {
        const source = text(fileName);
        return source === undefined
          ? host.getSourceFile(fileName, version)
          : ts.createSourceFile(fileName, source, version, true);
      },
    },
  );
}

/** Every comment of a file: each node's leading and trailing comments, once each. */
function comments(file: string): Array<{ line: number; text: string }> {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = new Map<number, string>();
  const collect = (ranges: ts.CommentRange[] | undefined) => {
    for (const range of ranges ?? []) found.set(range.pos, text.slice(range.pos, range.end));
  };
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(text, node.pos));
    collect(ts.getTrailingCommentRanges(text, node.end));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...found].map(([pos, comment]) => ({
    line: source.getLineAndCharacterOfPosition(pos).line + 1,
    text: comment,
  }));
}

/** A comment says why the code is as it is; which issue or change brought it there is the history's to tell. */
const HISTORY = /\bissues? #?\d+/i;

describe('exports of src/', () => {
  it('are each imported by another file (or are not exported)', () => {
    const program = repositoryProgram();
    const unused = unusedExports(program, ROOT, (file) => file.startsWith('src/') && !ENTRY_POINTS.includes(file));
    expect(program.getSourceFiles().filter((sf) => !sf.fileName.includes('/node_modules/')).length).toBeGreaterThan(
      400,
    );
    expect(unused).toEqual([]);
  });

  it('are found unused however they are reached (checked on made-up files)', () => {
    const program = madeUpProgram({
      'src/a.ts': [
        'export const named = 1;',
        'export const onlyHere = 2;',
        'export const nobody = 3;',
        'export const onlyHereToo = onlyHere + 1;',
        'export default class Defaulted {}',
        'export function dynamic() {}',
        'export function required() {}',
        'export const member = 4;',
        'export type TypeOnly = string;',
        'export interface ThroughTypeof { x: number }',
      ].join('\n'),
      'src/barrel.ts': "export * from './a';\nexport { named as renamed } from './a';\nexport * from './c';",
      'src/c.ts': 'export const c = 5;',
      'src/d.ts': 'export const d = 6;',
      'test/user.ts': [
        "import Anything from '../src/a';",
        "import { renamed } from '../src/barrel';",
        "import * as space from '../src/a';",
        "import type { TypeOnly } from '../src/barrel';",
        "import { d } from '../src/d';",
        'export async function f(): Promise<unknown> {',
        "  const { dynamic } = await import('../src/a');",
        "  const { required } = require('../src/a') as typeof import('../src/a');",
        "  const t: import('../src/a').ThroughTypeof = { x: 1 };",
        '  const typed: TypeOnly = "";',
        '  return [Anything, renamed, space.member, dynamic, required, d, t, typed];',
        '}',
      ].join('\n'),
    });
    expect(unusedExports(program, '/made-up', (file) => file.startsWith('src/'))).toEqual([
      'src/a.ts: nobody',
      'src/a.ts: onlyHere',
      'src/a.ts: onlyHereToo',
      "src/barrel.ts: export * from './c';",
      'src/c.ts: c',
    ]);
  });
});

describe('comments in src/', () => {
  it('name no issue (they say why, not which change)', () => {
    const found = sourceFiles(join(ROOT, 'src')).flatMap((file) =>
      comments(file)
        .filter((comment) => HISTORY.test(comment.text))
        .map((comment) => `${relative(ROOT, file)}:${comment.line}: ${HISTORY.exec(comment.text)![0]}`),
    );
    expect(found).toEqual([]);
  });

  it('are all read, block, line and doc comments alike (checked on this file)', () => {
    const own = comments(__filename).map((comment) => comment.text);
    expect(own.some((text) => text.startsWith('/**') && text.includes('Every export of src/'))).toBe(true);
    expect(own.some((text) => text.startsWith('/** A comment says why'))).toBe(true);
    expect(HISTORY.test('// see (issue 19)')).toBe(true);
    expect(HISTORY.test('// see issue #7')).toBe(true);
    expect(HISTORY.test('// tissue 3')).toBe(false);
  });
});
