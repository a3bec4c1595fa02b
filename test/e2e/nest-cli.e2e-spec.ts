import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { testTempDir } from '../support/temp-data-dir';

/**
 * nest-cli.json is real: the Nest CLI (a development dependency) builds the project with it, the builder a
 * NestJS developer's `nest build` and `nest start --watch` use. Built into a folder of its own, so the project's
 * dist/ (which other tests run) is never rewritten under them.
 */
describe('the Nest CLI', () => {
  it('reads nest-cli.json and `nest build` compiles the server', () => {
    const config = JSON.parse(readFileSync('nest-cli.json', 'utf8')) as {
      sourceRoot: string;
      entryFile: string;
      compilerOptions: { builder: string; tsConfigPath: string; deleteOutDir: boolean };
    };
    // dist/ also holds the dashboard's bundle (npm run build): a build must not delete it.
    expect(config.compilerOptions).toEqual({
      builder: 'tsc',
      tsConfigPath: 'tsconfig.build.json',
      deleteOutDir: false,
    });
    expect(existsSync(join(config.sourceRoot, `${config.entryFile}.ts`))).toBe(true);

    const dir = testTempDir('vf-nest-build-');
    const out = join(dir, 'out');
    const tsconfig = join(dir, 'tsconfig.json');
    writeFileSync(
      tsconfig,
      JSON.stringify({
        extends: resolve(config.compilerOptions.tsConfigPath),
        compilerOptions: {
          outDir: out,
          tsBuildInfoFile: join(out, '.tsbuildinfo'),
          typeRoots: [resolve('node_modules/@types')],
        },
      }),
    );
    const nest = resolve('node_modules/@nestjs/cli/bin/nest.js');
    // The CLI reads --path relative to the working directory, the project's, where nest-cli.json is.
    const result = spawnSync(process.execPath, [nest, 'build', '--path', relative(process.cwd(), tsconfig)], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect({ status: result.status, output: `${result.stdout}${result.stderr}`.trim() }).toEqual({
      status: 0,
      output: '',
    });
    expect(existsSync(join(out, 'main.js'))).toBe(true);
    expect(existsSync(join(out, 'worker.js'))).toBe(true);
  });
});
