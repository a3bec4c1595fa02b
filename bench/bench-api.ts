/**
 * What the benches that drive the compiled API share: a database of their own, the API process, and a
 * merchant with a token. Each bench still says what it measures; this only starts things.
 */
import 'reflect-metadata';
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { ApiKey } from '../src/modules/merchants/auth/api-key.entity';
import { ApiKeysRepository } from '../src/modules/merchants/auth/api-keys.repository';
import { ApiKeysService } from '../src/modules/merchants/auth/api-keys.service';
import { signToken } from '../src/modules/merchants/auth/token-signer';
import { createDataSource } from '../src/platform/database/data-source';
import { Metrics } from '../src/platform/metrics/metrics.service';
import { SharedCaches } from '../src/platform/redis/shared-cache';
import { children, freePort, listeningChildren, benchSql } from './support';
import { allowHeavyDisclosure } from '../test/factories/disclosure-budgets';

export const ROOT = join(__dirname, '..', '..');
/**
 * The build the benches run: dist/ unless BENCH_DIST names another (a copy of dist/ from an earlier commit,
 * with its package.json one folder up, kept inside this tree so it finds node_modules), for before/after runs.
 */
export const DIST = process.env.BENCH_DIST ?? join(ROOT, 'dist');
export const ADMIN_URL = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Settings every bench API runs with: quiet logs, the local downstreams allowed, fixed bench secrets. */
export const BENCH_API_ENV = {
  LOG_LEVEL: 'warn',
  FORWARD_INSECURE_HOSTS: '127.0.0.1',
  CURSOR_SECRET: 'bench-cursor-secret-bench-cursor-secret',
  VAULT_MASTER_KEYS: `bench:${Buffer.alloc(32, 7).toString('base64')}`,
};

/** A fresh database for one bench run; drop() removes it, open connections included. */
export async function benchDatabase(admin: Client, label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `vault_forward_bench_${label}_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${name}`);
  return {
    url: Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString(),
    drop: async () => void (await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

/**
 * Starts the compiled API (dist/main.js) as `npm start` does and waits until it is ready. `flags` are
 * its Node flags; `profileDir` makes it write a V8 CPU profile there on exit; `main` runs another build
 * (e.g. a copy of dist/ from an earlier commit, to compare two trees in one interleaved run).
 */
export async function startApi(
  env: Record<string, string>,
  options: { flags?: string[]; profileDir?: string; main?: string } = {},
): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const profile = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [];
  const flags = options.flags ?? ['--max-semi-space-size=64'];
  const child = spawn(process.execPath, [...profile, ...flags, options.main ?? join(DIST, 'main.js')], {
    env: { PATH: process.env.PATH!, PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`API exited with ${child.exitCode}`);
    const ready = await fetch(`${url}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    // A group (WEB_CONCURRENCY) is ready once each of its processes holds the socket they share.
    const group = Number(env.WEB_CONCURRENCY ?? 1);
    if (ready && (group <= 1 || listeningChildren(child.pid!, port) >= group)) return { url, process: child };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('API did not become ready');
}

/** Merchant `bench` with an ES256 API key; a token with every scope, as a merchant's integration holds. */
export async function benchMerchantToken(databaseUrl: string): Promise<string> {
  const db = createDataSource({ url: databaseUrl, poolSize: 1, entities: [ApiKey] });
  await db.initialize();
  try {
    await db.query(`INSERT INTO merchant_accounts (id, display_name) VALUES ('bench', 'Bench')`);
    // The benches send the same few cards far more often than the default disclosure budgets allow (decision
    // 0134): budgets far above any run, so each forward still pays for its count.
    await allowHeavyDisclosure(db, 'bench');
    // create() needs the repository only.
    const keys = new ApiKeysRepository(db.getRepository(ApiKey), benchSql(db, databaseUrl));
    const key = await new ApiKeysService(keys, new SharedCaches(null, null, new Metrics())).create('bench', 'ES256');
    return await signToken({ privateKeyPem: key.privateKeyPem, keyId: key.id, scopes: ['*.write', '*.read'] });
  } finally {
    await db.destroy();
  }
}
