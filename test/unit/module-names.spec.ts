import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * One naming rule for Nest modules, so a reader knows from a name where a module may be loaded:
 * - `…Module` serves routes (declares controllers): the API process only;
 * - `…WorkerModule` runs a queue's consumer (a `@Processor`): the worker process only;
 * - `…CoreModule` has neither: any process (API, worker, CLI) may load it.
 * The worker's module graph reaches no module with routes.
 */
const SRC = resolve(__dirname, '../../src');

/** Modules the names cannot tell, each with why. */
const EXCEPTIONS: Record<string, string> = {
  ForwardEntryModule: 'serves POST /vault-forward through its own Fastify route, ahead of Nest’s router',
  InboundModule: 'serves /vault-inbound/{route_id}/… on Node’s request, ahead of fastify and Nest’s router',
  SecureFieldsModule:
    'serves the secure-fields origin (its Host) on Node’s request, ahead of fastify and Nest’s router',
  ForwardCallbacksModule: 'its consumer is an option of forRoot: the worker asks for it, the API does not',
};

interface ModuleClass {
  name: string;
  file: string;
  /** The decorator and the class body, comments removed. */
  text: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

/** Every `@Module(…) class X` of a source text, with the text from its decorator to the next one (or the end). */
function moduleClasses(file: string, source: string): ModuleClass[] {
  const text = withoutComments(source);
  const starts = [...text.matchAll(/@Module\(/g)].map((m) => m.index);
  return starts.flatMap((start, i) => {
    const chunk = text.slice(start, starts[i + 1] ?? text.length);
    const name = /class\s+(\w+)/.exec(chunk)?.[1];
    return name ? [{ name, file, text: chunk }] : [];
  });
}

function kind(module: ModuleClass): 'routes' | 'worker' | 'core' {
  if (/\bcontrollers\s*:/.test(module.text)) return 'routes';
  if (/\b\w+Processor\b/.test(module.text)) return 'worker';
  return 'core';
}

/** The names that break the rule, with why. */
function misnamed(modules: ModuleClass[]): string[] {
  return modules.flatMap((module) => {
    if (module.name in EXCEPTIONS) return [];
    const expected = kind(module);
    const actual = module.name.endsWith('CoreModule')
      ? 'core'
      : module.name.endsWith('WorkerModule')
        ? 'worker'
        : 'routes';
    return actual === expected ? [] : [`${module.name} (${module.file}) is a ${expected} module`];
  });
}

/** Modules with routes that `root`'s graph reaches (a module reaches every `…Module` its text names). */
function routesReached(modules: ModuleClass[], root: string): string[] {
  const byName = new Map(modules.map((m) => [m.name, m]));
  const seen = new Set<string>([root]);
  const queue = [root];
  while (queue.length > 0) {
    const module = byName.get(queue.pop()!);
    if (!module) continue;
    for (const [name] of module.text.matchAll(/\b[A-Z]\w*Module\b/g))
      if (!seen.has(name)) {
        seen.add(name);
        queue.push(name);
      }
  }
  return [...seen].filter((name) => byName.has(name) && kind(byName.get(name)!) === 'routes');
}

const modules = sourceFiles(SRC)
  .filter((file) => !relative(SRC, file).startsWith('platform/'))
  .flatMap((file) => moduleClasses(relative(SRC, file), readFileSync(file, 'utf8')));

describe('module names', () => {
  it('finds the modules of the contexts', () => {
    expect(modules.map((m) => m.name)).toEqual(expect.arrayContaining(['VaultCoreModule', 'BuyersModule']));
    // The walk reaches through the real graph: the API's reaches the modules with routes.
    expect(routesReached(modules, 'ApiModule')).toEqual(expect.arrayContaining(['BuyersModule', 'ForwardJobsModule']));
  });

  it('names each module of a context by what it may be loaded in', () => {
    const contexts = modules.filter((m) => m.file.startsWith('modules/'));
    expect(misnamed(contexts)).toEqual([]);
  });

  it('lets the worker reach no module with routes', () => {
    expect(routesReached(modules, 'WorkerModule')).toEqual([]);
  });

  it('fails on made-up modules that break the rule', () => {
    const made = [
      ...moduleClasses('a.ts', '@Module({ controllers: [A] })\nexport class ACoreModule {}'),
      ...moduleClasses('b.ts', '@Module({ providers: [B] })\nexport class BModule {}'),
      ...moduleClasses('c.ts', '@Module({ providers: [CProcessor] })\nexport class CCoreModule {}'),
      ...moduleClasses('w.ts', '@Module({ imports: [DModule] })\nexport class WorkerModule {}'),
      ...moduleClasses('d.ts', '@Module({ controllers: [D] })\nexport class DModule {}'),
    ];
    expect(misnamed(made)).toEqual([
      'ACoreModule (a.ts) is a routes module',
      'BModule (b.ts) is a core module',
      'CCoreModule (c.ts) is a worker module',
      'WorkerModule (w.ts) is a core module',
    ]);
    expect(routesReached(made, 'WorkerModule')).toEqual(['DModule']);
  });
});
