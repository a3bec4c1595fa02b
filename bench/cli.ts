import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { interleaved, table } from './support';

/**
 * How long a CLI command takes on a built checkout, end to end as a person types it: `npm run
 * --silent cli -- …` (npm, the staleness check of scripts/build.js, then node), and the compiled
 * CLI alone for a command that loads nothing (`--help`), one that signs locally (`token`) and one
 * that boots the services against PostgreSQL (`api-key list`). Not a timed test: the numbers go to
 * docs/benchmarks.md by hand.
 */
async function main(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 10);
  const admin = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const name = `vault_forward_bench_cli_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const client = new Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const dir = mkdtempSync(join(tmpdir(), 'vf-bench-cli-'));
  const env = { PATH: process.env.PATH, DATABASE_URL: url.toString(), DATA_DIR: dir };
  const root = join(__dirname, '..', '..');
  const run = (command: string, args: string[]) => () =>
    Promise.resolve(execFileSync(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  try {
    const keyFile = join(dir, 'bench.pem');
    execFileSync(process.execPath, ['dist/cli/main.js', 'api-key', 'create', '--instance', '--out', keyFile], {
      cwd: root,
      env,
    });
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const results = await interleaved(
      {
        'npm run --silent cli -- --help': run(npm, ['run', '--silent', 'cli', '--', '--help']),
        'npm run --silent cli -- token --key FILE': run(npm, [
          'run',
          '--silent',
          'cli',
          '--',
          'token',
          '--key',
          keyFile,
        ]),
        'node dist/cli/main.js --help': run(process.execPath, ['dist/cli/main.js', '--help']),
        'node dist/cli/main.js token --key FILE': run(process.execPath, [
          'dist/cli/main.js',
          'token',
          '--key',
          keyFile,
        ]),
        'node dist/cli/main.js api-key list (PostgreSQL)': run(process.execPath, [
          'dist/cli/main.js',
          'api-key',
          'list',
        ]),
        'npm run --silent cli -- api-key list (PostgreSQL)': run(npm, [
          'run',
          '--silent',
          'cli',
          '--',
          'api-key',
          'list',
        ]),
      },
      rounds,
      1,
    );
    process.stdout.write(`CLI start-up, ${rounds} rounds, wall time per command\n${table(results)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
