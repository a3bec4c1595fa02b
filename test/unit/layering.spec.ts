import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

/**
 * The import graph of src/, read with the TypeScript compiler (every `import`, `import type`,
 * `export … from`, `import()` and `require()`, resolved as tsc resolves them), checked against the
 * layering rules below and for circles (issue 21, item 7).
 */
const SRC = resolve(__dirname, '../../src');

/** The lowest layers: shared mechanisms that features build on, and that build on nothing but each other. */
const FOUNDATION = ['common', 'config', 'database', 'card-data'];

/** The three rooms src/modules/forwarding/request/ was split into: the request, the disclosure record, sending. */
const FORWARD_ROOMS = ['forwarding', 'forward-records', 'outbound'];
/** What sits above them: the queued path and the HTTP entry that chooses between it and the fast path. */
const ABOVE = ['forward-jobs', 'forward-entry'];

/**
 * Folders (or files) are named by their path under src/; a rule applies to every file beneath them. `only`: what
 * the folders may import besides themselves; `not`: what they must not import. One line per rule.
 */
type Rule = { from: string[]; why: string } & ({ only: string[] } | { not: string[] });

const RULES: Rule[] = [
  { from: ['database'], only: FOUNDATION, why: 'entities are registered by their own modules (forFeature)' },
  { from: ['common'], only: FOUNDATION, why: 'features plug into shared mechanisms from the composition root' },
  // The one card-number detector and the authentication-data fields: every sink calls it, it calls nothing.
  { from: ['card-data'], only: [], why: 'the card-data detector is pure text work every sink can use' },
  // The placeholder language (issue 23) is pure text work: it learns what a name is worth through the shapes and
  // sources its callers hand it, never by reaching into the vault, payment methods or forwarding.
  { from: ['placeholders'], only: FOUNDATION, why: 'the scanner knows no feature; features hand it their values' },
  // The forwarding stack is one-way (issue 10): targets ← vault-forward-configs ← forward-authentications ← forwarding.
  { from: ['targets'], only: [], why: 'the target rules both configs and forwarding use import no feature' },
  // The kind descriptions of authentication methods (data and pure functions), read by methods, definitions and steps.
  { from: ['authentication-kinds'], only: [], why: 'the kind descriptions import no feature' },
  { from: ['vault-forward-configs'], not: ['forward-authentications', ...FORWARD_ROOMS, ...ABOVE], why: 'one-way' },
  { from: ['forward-authentications'], not: [...FORWARD_ROOMS, ...ABOVE], why: 'one-way' },
  // Definitions (issue 22) sit between configs and authentication methods, whose kind descriptions (data and pure
  // functions) they read to check how a definition's fields map onto our kinds.
  {
    from: ['vault-forward-definitions'],
    only: [
      ...FOUNDATION,
      'auth',
      'vault-forward-configs',
      'authentication-kinds',
      'modules/forwarding-setup/authentication-kinds/method-fields.ts',
    ],
    why: 'one-way: of the methods, only their kind descriptions',
  },
  // Rooms by capability (issue 21, item 2): forward-entry → forward-jobs → forwarding → forward-records, outbound.
  {
    from: FORWARD_ROOMS,
    not: ABOVE,
    why: 'the choice between sending now and queueing (prefersAsync, ForwardJobsService) is made in forward-entry/',
  },
  { from: ['forward-jobs'], not: ['forward-entry'], why: 'the entry uses the queue, not the other way round' },
  { from: ['outbound'], not: ['forwarding', 'forward-records'], why: 'sending knows nothing of the request or record' },
  { from: ['forward-records'], not: ['forwarding'], why: 'the record is written by the request, never the reverse' },
  // The response side (issue 27) sits beside the three rooms: forwarding hands it the answer, it stores cards.
  {
    from: ['forward-responses'],
    not: ['forwarding', 'forward-records', ...ABOVE],
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
    expect(graph.get('core.module.ts')).toContain('platform/database/data-source.ts');
    // A type-only import and a dynamic import() are edges too.
    expect(graph.get('modules/forwarding/records/forward-record-spool.ts')).toContain(
      'modules/forwarding/records/forward-record.ts',
    );
    expect(graph.get('cli/main.ts')).toContain('cli/cli.module.ts');
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

  describe('the checks themselves, on a made-up graph', () => {
    const made: Graph = new Map([
      ['database/a.ts', ['database/b.ts', 'config/c.ts']],
      ['database/b.ts', ['buyers/e.ts']],
      ['buyers/e.ts', ['buyers/f.ts', 'database/a.ts']],
      ['buyers/f.ts', ['buyers/e.ts']],
      ['forwarding/g.ts', ['forward-jobs/h.ts']],
      ['forward-jobs/h.ts', []],
      ['config/c.ts', []],
    ]);

    it('finds an import out of an `only` rule and into a `not` rule', () => {
      expect(violations(made, { from: ['database'], only: FOUNDATION, why: '' })).toEqual([
        'database/b.ts → buyers/e.ts',
      ]);
      expect(violations(made, { from: ['forwarding'], not: ['forward-jobs'], why: '' })).toEqual([
        'forwarding/g.ts → forward-jobs/h.ts',
      ]);
    });

    it('finds circles, however long', () => {
      expect(circles(made)).toEqual([['buyers/e.ts', 'buyers/f.ts', 'database/a.ts', 'database/b.ts']]);
      expect(circles(new Map([['a.ts', ['a.ts']]]))).toEqual([['a.ts']]);
    });
  });
});

/** A rule naming a folder that does not exist would pass whatever the code does. */
function exists(graph: Graph, folder: string): boolean {
  return [...graph.keys()].some((file) => within(file, [folder]));
}
