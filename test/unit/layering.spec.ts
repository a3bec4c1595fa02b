import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

/**
 * The import graph of src/, read with the TypeScript compiler (every `import`, `import type`,
 * `export … from`, `import()` and `require()`, resolved as tsc resolves them), checked against the
 * layering rules below and for circles, of files and of folders.
 */
const SRC = resolve(__dirname, '../../src');

/**
 * src/ holds the entry points and three folders: app/ (the composition root: Nest root modules, bootstrap, routes
 * that look at the whole service), platform/ (infrastructure: config, database, Redis, the queue engines, logging,
 * metrics, telemetry, HTTP plumbing) and modules/ (one folder per business context).
 */
const TOP_LEVEL = ['app', 'cli', 'main.ts', 'modules', 'platform', 'worker.ts'];

/**
 * The layers, lowest first: a file may import from its own layer and those below, never from one above. The
 * contexts are ordered by what they build on: the vault knows no merchant, payments store cards in the vault,
 * forwarding setup names merchants' targets, forwarding uses all of them, inbound routes send through forwarding's
 * outbound client (decision 0153).
 */
const LAYERS = [
  'platform',
  'modules/vault',
  'modules/merchants',
  'modules/payments',
  'modules/forwarding-setup',
  'modules/forwarding',
  'modules/inbound',
  'app',
  'cli',
  'main.ts',
  'worker.ts',
];

/** The platform's own lowest layers: shared mechanisms that build on nothing but each other. */
const PLATFORM_BASE = [
  'platform/http',
  'platform/openapi',
  'platform/pagination',
  'platform/problem',
  'platform/time',
  'platform/config',
  'platform/database',
  'platform/card-data',
];

/** The rooms of a forward sent now: the request, the disclosure record, sending, the answer. */
const FORWARD_ROOMS = [
  'modules/forwarding/request',
  'modules/forwarding/records',
  'modules/forwarding/record-bodies',
  'modules/forwarding/sending',
];
/** The queued path: a forward's jobs, their callbacks and the queue engines they run on. */
const QUEUED = ['modules/forwarding/jobs', 'modules/forwarding/callbacks', 'platform/job-queue'];
/** What sits above the rooms: the queued path and the HTTP entry that chooses between it and sending now. */
const ABOVE = ['modules/forwarding/jobs', 'modules/forwarding/entry'];
/** What a forward sent now runs through; none of it may reach into the queued path. */
const SYNCHRONOUS = [
  ...FORWARD_ROOMS,
  'modules/forwarding/budgets',
  'modules/forwarding/answers',
  'modules/forwarding/idempotency',
  'modules/forwarding-setup',
];

/**
 * Folders (or files) are named by their path under src/; a rule applies to every file beneath them. `only`: what
 * the folders may import besides themselves; `not`: what they must not import. One line per rule.
 */
type Rule = { from: string[]; why: string } & ({ only: string[] } | { not: string[] });

const RULES: Rule[] = [
  { from: ['platform'], only: [], why: 'infrastructure knows no business context' },
  {
    from: ['platform/database'],
    only: PLATFORM_BASE,
    why: 'entities are registered by their own modules (forFeature)',
  },
  {
    from: ['platform/http', 'platform/openapi', 'platform/pagination', 'platform/problem', 'platform/time'],
    only: PLATFORM_BASE,
    why: 'features plug into shared mechanisms from the composition root',
  },
  // The one card-number detector and the authentication-data fields: every sink calls it, it calls nothing.
  { from: ['platform/card-data'], only: [], why: 'the card-data detector is pure text work every sink can use' },
  // The placeholder language is pure text work: it learns what a name is worth through the shapes and sources its
  // callers hand it, never by reaching into the vault, payment methods or forwarding.
  {
    from: ['modules/vault/placeholders'],
    only: PLATFORM_BASE,
    why: 'the scanner knows no feature; features hand it their values',
  },
  // Forwarding setup is one-way: targets ← configs ← authentication methods ← forwarding.
  {
    from: ['modules/forwarding-setup/targets'],
    only: [],
    why: 'the target rules both configs and forwarding use import no feature',
  },
  // The signing schemes (Cybersource, Mastercard OAuth 1.0a, SigV4, RFC 9421): pure functions over the request.
  {
    from: ['modules/forwarding-setup/request-signers'],
    only: [],
    why: 'the signing schemes import no feature',
  },
  // The kind descriptions of authentication methods and their field checks (data and pure functions), read by
  // methods, definitions and steps.
  {
    from: ['modules/forwarding-setup/authentication-kinds'],
    only: ['platform', 'modules/forwarding-setup/targets'],
    why: 'the kind descriptions import no feature',
  },
  {
    from: ['modules/forwarding-setup/configs'],
    not: ['modules/forwarding-setup/authentication-methods'],
    why: 'one-way',
  },
  // Definitions sit between configs and authentication methods, whose kind descriptions (data and pure functions)
  // they read to check how a definition's fields map onto our kinds.
  {
    from: ['modules/forwarding-setup/definitions'],
    only: [
      'platform',
      'modules/merchants/access',
      'modules/merchants/auth',
      'modules/forwarding-setup/configs',
      'modules/forwarding-setup/authentication-kinds',
      'modules/forwarding-setup/authentication-kinds/method-fields.ts',
    ],
    why: 'one-way: of the methods, only their kind descriptions',
  },
  // Rooms by capability: entry → jobs → request → records, sending.
  {
    from: FORWARD_ROOMS,
    not: ABOVE,
    why: 'the choice between sending now and queueing is made in modules/forwarding/entry/',
  },
  {
    from: SYNCHRONOUS,
    not: QUEUED,
    why: 'a forward sent now runs without the queued path: the queue down or off changes nothing for it',
  },
  {
    from: ['modules/forwarding/jobs'],
    not: ['modules/forwarding/entry'],
    why: 'the entry uses the queue, not the other way round',
  },
  {
    from: ['modules/forwarding/sending'],
    not: ['modules/forwarding/request', 'modules/forwarding/records'],
    why: 'sending knows nothing of the request or record',
  },
  {
    from: ['modules/forwarding/records'],
    not: ['modules/forwarding/request'],
    why: 'the record is written by the request, never the reverse',
  },
  // An inbound body's leaves and cards are text work: the entry hands them the route's mappings (decision 0155).
  { from: ['modules/inbound/bodies'], only: ['platform'], why: 'reading a body knows no feature' },
  {
    from: ['modules/inbound/routes', 'modules/inbound/records'],
    not: ['modules/inbound/entry'],
    why: 'the entry reads routes and writes records, never the reverse',
  },
  // The response side sits beside the rooms: the request hands it the answer, it stores cards.
  {
    from: ['modules/forwarding/answers'],
    not: ['modules/forwarding/request', 'modules/forwarding/records', ...ABOVE],
    why: 'the executor calls the response rules, never the reverse',
  },
];

/**
 * Rules wanted but not holding yet. Each is checked to still be broken, so that the day it holds the test says
 * to move it into RULES, where it then stays true.
 */
const PENDING_RULES: Rule[] = [];

/**
 * Circles of imports that are known and kept for now, each as its files (paths under src/, sorted) with the
 * reason. The aim is none: an entry needs a refactor too large for the change that found it.
 */
const ALLOWED_CIRCLES: Array<{ files: string[]; why: string }> = [];

/**
 * Circles between folders (a feature's dto/ counted as its folder) that are known and kept for now, each as its
 * folders (sorted) with the reason. The aim is none.
 */
const ALLOWED_FOLDER_CIRCLES: Array<{ folders: string[]; why: string }> = [];

type Graph = Map<string, string[]>;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

function readGraph(): { graph: Graph; unresolved: string[] } {
  const config = ts.readConfigFile(resolve(SRC, '../tsconfig.json'), (path) => ts.sys.readFile(path));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, resolve(SRC, '..'));
  const cache = ts.createModuleResolutionCache(resolve(SRC, '..'), (name) => name, options);
  const graph: Graph = new Map();
  const unresolved: string[] = [];
  for (const file of tsFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName: specifier } of importedFiles) {
      const resolved = ts.resolveModuleName(specifier, file, options, ts.sys, cache).resolvedModule;
      if (!resolved) {
        if (specifier.startsWith('.')) unresolved.push(`${relative(SRC, file)}: '${specifier}'`);
        continue;
      }
      if (resolved.isExternalLibraryImport || !resolved.resolvedFileName.startsWith(`${SRC}/`)) continue;
      targets.add(relative(SRC, resolved.resolvedFileName));
    }
    graph.set(relative(SRC, file), [...targets].sort());
  }
  return { graph, unresolved };
}

function within(path: string, folders: string[]): boolean {
  return folders.some((folder) => path === folder || path.startsWith(`${folder}/`));
}

function violations(graph: Graph, rule: Rule): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    if (!within(file, rule.from)) continue;
    for (const target of targets) {
      if (within(target, rule.from)) continue;
      const refused = 'only' in rule ? !within(target, rule.only) : within(target, rule.not);
      if (refused) found.push(`${file} → ${target}`);
    }
  }
  return found;
}

/** Every strongly connected component of more than one file (or a file importing itself), files sorted. */
function circles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)?.includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** The index of the layer a file belongs to (-1: none, which the test refuses). */
function layerOf(file: string): number {
  return LAYERS.findIndex((layer) => within(file, [layer]));
}

/** Every import from a lower layer into a higher one. */
function upwardImports(graph: Graph): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph)
    for (const target of targets) if (layerOf(target) > layerOf(file)) found.push(`${file} → ${target}`);
  return found;
}

/** A file's folder; a feature's dto/ is part of the feature's folder. */
function folderOf(file: string): string {
  const folder = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '.';
  return folder.replace(/\/dto$/, '');
}

/** The import graph between folders: an edge where a file of one imports a file of the other. */
function folderGraph(graph: Graph): Graph {
  const folders: Graph = new Map();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const to = new Set(folders.get(from) ?? []);
    for (const target of targets) if (folderOf(target) !== from) to.add(folderOf(target));
    folders.set(from, [...to].sort());
  }
  return folders;
}

/** Composition roots: they wire the whole service (global pipes, the SQL runner, the CLI's services). */
const COMPOSITION_ROOTS = ['app', 'cli'];

/**
 * The classes a Nest module file provides (`providers: [...]`, with `useClass`/`useExisting` of provider objects)
 * that it imports from outside its own folder, as `file: Class from specifier`.
 */
export function foreignProviders(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const importedFrom = new Map<string, string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !statement.importClause) continue;
    const specifier = (statement.moduleSpecifier as ts.StringLiteral).text;
    const bindings = statement.importClause.namedBindings;
    if (bindings && ts.isNamedImports(bindings))
      for (const element of bindings.elements) importedFrom.set(element.name.text, specifier);
  }
  const provided: string[] = [];
  const collect = (node: ts.Expression): void => {
    if (ts.isArrayLiteralExpression(node)) node.elements.forEach(collect);
    else if (ts.isSpreadElement(node)) collect(node.expression);
    else if (ts.isIdentifier(node)) provided.push(node.text);
    else if (ts.isObjectLiteralExpression(node))
      for (const property of node.properties)
        if (
          ts.isPropertyAssignment(property) &&
          ['useClass', 'useExisting'].includes(property.name.getText(source)) &&
          ts.isIdentifier(property.initializer)
        )
          provided.push(property.initializer.text);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAssignment(node) && node.name.getText(source) === 'providers') collect(node.initializer);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return provided
    .filter((name) => {
      const specifier = importedFrom.get(name);
      return specifier !== undefined && specifier.startsWith('.') && !specifier.startsWith('./');
    })
    .map((name) => `${file}: ${name} from ${importedFrom.get(name)}`);
}

function label(rule: Rule): string {
  const from = rule.from.join(', ');
  if ('only' in rule) return `${from} imports only ${[...new Set([...rule.from, ...rule.only])].join(', ')}`;
  return `${from} imports no ${rule.not.join(', ')}`;
}

describe('module layering: the import graph of src/', () => {
  const { graph, unresolved } = readGraph();

  it('reads every relative import of src/ (a checker that sees no edge would pass anything)', () => {
    expect(unresolved).toEqual([]);
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('app/core.module.ts')).toContain('platform/database/data-source.ts');
    // A type-only import and a dynamic import() are edges too.
    expect(graph.get('modules/forwarding/records/forward-record-spool.ts')).toContain(
      'modules/forwarding/records/forward-record.ts',
    );
    expect(graph.get('cli/cli-support.ts')).toContain('cli/cli.module.ts');
  });

  it.each(RULES.map((rule) => [label(rule), rule] as const))('%s', (_label, rule) => {
    expect(rule.from.filter((folder) => !exists(graph, folder))).toEqual([]);
    expect({ why: rule.why, violations: violations(graph, rule) }).toEqual({ why: rule.why, violations: [] });
  });

  // it.each refuses an empty table; with no rule pending there is nothing to check.
  const pendingIt = PENDING_RULES.length > 0 ? it.each : () => () => undefined;
  pendingIt(PENDING_RULES.map((rule) => [label(rule), rule] as const))(
    'pending: %s (still broken; once it holds, move it to RULES)',
    (_label, rule) => {
      expect(rule.from.filter((folder) => !exists(graph, folder))).toEqual([]);
      expect(violations(graph, rule).length).toBeGreaterThan(0);
    },
  );

  it('has no circle of imports, other than those allowed above', () => {
    const allowed = new Set(ALLOWED_CIRCLES.map((circle) => circle.files.join(' ↔ ')));
    const found = circles(graph).map((files) => files.join(' ↔ '));
    expect(found.filter((circle) => !allowed.has(circle))).toEqual([]);
    // An allowed circle that is gone leaves the list.
    expect([...allowed].filter((circle) => !found.includes(circle))).toEqual([]);
  });

  it('a module provides only classes of its own folder (composition roots apart)', () => {
    const modules = [...graph.keys()].filter((file) => file.endsWith('.module.ts') && !within(file, COMPOSITION_ROOTS));
    expect(modules.length).toBeGreaterThan(20);
    expect(modules.flatMap((file) => foreignProviders(file, readFileSync(join(SRC, file), 'utf8')))).toEqual([]);
  });

  it(`src/ holds only ${TOP_LEVEL.join(', ')}`, () => {
    expect(readdirSync(SRC).sort()).toEqual(TOP_LEVEL);
  });

  it('every file is in a layer, and no file imports from a layer above its own', () => {
    expect([...graph.keys()].filter((file) => layerOf(file) < 0)).toEqual([]);
    expect(upwardImports(graph)).toEqual([]);
  });

  it('has no circle of folders, other than those allowed above', () => {
    const allowed = new Set(ALLOWED_FOLDER_CIRCLES.map((circle) => circle.folders.join(' ↔ ')));
    const found = circles(folderGraph(graph)).map((folders) => folders.join(' ↔ '));
    expect(found.filter((circle) => !allowed.has(circle))).toEqual([]);
    expect([...allowed].filter((circle) => !found.includes(circle))).toEqual([]);
  });

  describe('the checks themselves, on a made-up graph', () => {
    const made: Graph = new Map([
      ['platform/database/a.ts', ['platform/database/b.ts', 'platform/config/c.ts']],
      ['platform/database/b.ts', ['modules/payments/buyers/e.ts']],
      ['modules/payments/buyers/e.ts', ['modules/payments/buyers/f.ts', 'platform/database/a.ts']],
      ['modules/payments/buyers/f.ts', ['modules/payments/buyers/e.ts']],
      ['modules/forwarding/request/g.ts', ['modules/forwarding/jobs/h.ts']],
      ['modules/forwarding/jobs/h.ts', ['modules/forwarding/jobs/dto/i.ts']],
      ['modules/forwarding/jobs/dto/i.ts', []],
      ['platform/config/c.ts', []],
    ]);

    it('finds an import out of an `only` rule and into a `not` rule', () => {
      expect(violations(made, { from: ['platform/database'], only: PLATFORM_BASE, why: '' })).toEqual([
        'platform/database/b.ts → modules/payments/buyers/e.ts',
      ]);
      // A forward sent now that reaches into the queued path.
      expect(violations(made, { from: SYNCHRONOUS, not: QUEUED, why: '' })).toEqual([
        'modules/forwarding/request/g.ts → modules/forwarding/jobs/h.ts',
      ]);
    });

    it('finds a module providing a class of another folder, directly or as useClass', () => {
      const text = [
        "import { A } from './a';",
        "import { B } from '../other/b';",
        "import { C } from '../other/c';",
        'const x = { providers: [A, B, { provide: A, useClass: C }] };',
      ].join('\n');
      expect(foreignProviders('m/m.module.ts', text)).toEqual([
        'm/m.module.ts: B from ../other/b',
        'm/m.module.ts: C from ../other/c',
      ]);
    });

    it('finds an import from a lower layer into a higher one', () => {
      expect(upwardImports(made)).toEqual(['platform/database/b.ts → modules/payments/buyers/e.ts']);
    });

    it('finds circles of files and of folders, however long; a dto/ is its feature', () => {
      expect(circles(made)).toEqual([
        [
          'modules/payments/buyers/e.ts',
          'modules/payments/buyers/f.ts',
          'platform/database/a.ts',
          'platform/database/b.ts',
        ],
      ]);
      expect(circles(new Map([['a.ts', ['a.ts']]]))).toEqual([['a.ts']]);
      expect(circles(folderGraph(made))).toEqual([['modules/payments/buyers', 'platform/database']]);
    });
  });
});

/** A rule naming a folder that does not exist would pass whatever the code does. */
function exists(graph: Graph, folder: string): boolean {
  return [...graph.keys()].some((file) => within(file, [folder]));
}
