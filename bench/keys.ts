/**
 * npm run bench:keys — what the master keys' provider costs a card forward (issue 26), side by side in
 * one run, with autocannon (same connections, duration and body with two card placeholders each):
 *   (env)      VAULT_KEY_PROVIDER=env: the master key in the API's memory, every data key unwrapped there;
 *   (pkcs11)   the master key in a SoftHSM2 token, the data-key cache warm (the default settings);
 *   (no cache) the same token with VAULT_DATA_KEY_CACHE_SIZE=0: every card's data key unwrapped by the token
 *              (two C_DecryptInit + C_Decrypt per forward).
 * The token is initialised in a temporary folder of this run (removed at the end, as are the databases).
 * Each API runs alone in its own process, against a local echo server; the load generator runs here.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { initSoftHsmToken } from '../test/support/softhsm-token';
import { ADMIN_URL, BENCH_API_ENV, benchDatabase, benchMerchantToken, REDIS_URL, ROOT, startApi } from './bench-api';
import { children, cpuPerRequest, forkServer, LOAD, LoadResult, loadRun, postJson, stopChild } from './support';

const CONNECTIONS = LOAD.connections;
const DURATION = LOAD.durationS;

/** A merchant, a config for the echo server and two cards, through the API itself; the forward's headers. */
async function cardForward(api: string, databaseUrl: string, echoPort: number): Promise<Record<string, string>> {
  const token = await benchMerchantToken(databaseUrl);
  await postJson(`${api}/vault-forward/configs`, token, { display_name: 'Echo', hosts: [`127.0.0.1:${echoPort}`] });
  const cards = [];
  for (const [number, expiry] of [
    ['4111111111111111', '12/30'],
    ['5555555555554444', '01/31'],
  ])
    cards.push(
      (await postJson(`${api}/payment-methods`, token, { method: 'card', number, expiration_date: expiry })).id,
    );
  return {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    'x-vault-forward-url': `http://127.0.0.1:${echoPort}/charge`,
    'x-vault-forward-http-method': 'POST',
    'x-vault-forward-payment-methods': cards.join(','),
  };
}

async function main(): Promise<void> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  const dir = mkdtempSync(join(tmpdir(), 'vf-bench-keys-'));
  const envDatabase = await benchDatabase(client, 'keys_env');
  const hsmDatabase = await benchDatabase(client, 'keys_hsm');
  try {
    const hsm = initSoftHsmToken(dir, join(dir, 'softhsm2.conf'), 'bench');
    execFileSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'vault', 'key', 'create', '--label', 'bench-1'], {
      env: { PATH: process.env.PATH!, ...hsm.env('') },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const echo = await forkServer('echo-server.js');
    const rows: Record<string, LoadResult> = {};
    const run = async (
      label: string,
      env: Record<string, string>,
      databaseUrl: string,
      headers?: Record<string, string>,
    ) => {
      const api = await startApi({ ...BENCH_API_ENV, DATABASE_URL: databaseUrl, REDIS_URL, ...env });
      try {
        const forward = headers ?? (await cardForward(api.url, databaseUrl, echo.port));
        rows[label] = await loadRun(`${api.url}/vault-forward`, forward, api.process.pid);
        return forward;
      } finally {
        await stopChild(api.process);
      }
    };
    const pkcs11 = { ...hsm.env('bench-1'), VAULT_MASTER_KEYS: '' };
    await run('(env) VAULT_KEY_PROVIDER=env', { VAULT_KEY_PROVIDER: 'env' }, envDatabase.url);
    const headers = await run('(pkcs11) SoftHSM2, data-key cache warm', pkcs11, hsmDatabase.url);
    await run(
      '(no cache) SoftHSM2, VAULT_DATA_KEY_CACHE_SIZE=0',
      { ...pkcs11, VAULT_DATA_KEY_CACHE_SIZE: '0' },
      hsmDatabase.url,
      headers,
    );

    console.log(
      `\n${CONNECTIONS} connections, ${DURATION} s each after a 2 s warm-up, a card forward with two card placeholders\n`,
    );
    console.log('| case | requests/s | p50 ms | p99 ms | errors | non-2xx | API CPU µs/request |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const [label, r] of Object.entries(rows)) {
      const cpu = r.cpuPerRequestUs ? cpuPerRequest(r).toFixed(0) : 'n/a';
      console.log(`| ${label} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} | ${cpu} |`);
    }
    const [env, warm, cold] = Object.values(rows);
    const ratio = (a: LoadResult, b: LoadResult) =>
      `throughput ${(a.rps / b.rps).toFixed(2)}, p50 ${(a.p50 / b.p50).toFixed(2)}×` +
      (a.cpuPerRequestUs && b.cpuPerRequestUs
        ? `, CPU per request ${(cpuPerRequest(a) / cpuPerRequest(b)).toFixed(2)}×`
        : '');
    console.log(`\n(pkcs11)/(env): ${ratio(warm, env)}`);
    console.log(`(no cache)/(env): ${ratio(cold, env)}`);
    console.log(`(no cache)/(pkcs11): ${ratio(cold, warm)}`);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await envDatabase.drop();
    await hsmDatabase.drop();
    await client.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
