/**
 * npm run bench:keys — (signing) what nine forwards signing with the largest key a method accepts (RSA 4,096
 * bits, RFC 9421 rsa-pss-sha512; issue 47, decision 0144) do to /health/live on the same process, beside the
 * same nine forwards unsigned and an idle process: /health/live is asked one request at a time while nine
 * forwards are kept in flight, its p50/p95/p99 printed with their ratio to idle. BENCH_KEYS_BASELINE (another
 * build's main.js) runs the same phases on that build, interleaved. BENCH_KEYS=signing runs only this section,
 * BENCH_KEYS=providers only the one below.
 *
 * Then what the master keys' provider costs a card forward (issue 26), side by side in
 * one run, with autocannon (same connections, duration and body with two card placeholders each):
 *   (env)      VAULT_KEY_PROVIDER=env: the master key in the API's memory, every data key unwrapped there;
 *   (pkcs11)   the master key in a SoftHSM2 token, the data-key cache warm (the default settings);
 *   (no cache) the same token with VAULT_DATA_KEY_CACHE_SIZE=0: every card's data key unwrapped by the token
 *              (two C_DecryptInit + C_Decrypt per forward).
 * The token is initialised in a temporary folder of this run (removed at the end, as are the databases).
 * Each API runs alone in its own process, against a local echo server; the load generator runs here.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { Client as HttpClient } from 'undici';
import { initSoftHsmToken } from '../test/support/softhsm-token';
import { ADMIN_URL, BENCH_API_ENV, benchDatabase, benchMerchantToken, REDIS_URL, ROOT, startApi } from './bench-api';
import {
  children,
  cpuPerRequest,
  forkServer,
  LOAD,
  LoadResult,
  loadRun,
  postJson,
  stats,
  stopChild,
  TWO_CARD_BODY,
} from './support';

const CONNECTIONS = LOAD.connections;
const DURATION = LOAD.durationS;
const SECTIONS = process.env.BENCH_KEYS ?? 'signing,providers';
/** Forwards kept in flight at once (the finding's nine); rounds of phases, and how long each phase asks /health/live. */
const IN_FLIGHT = 9;
const ROUNDS = Number(process.env.BENCH_KEYS_ROUNDS ?? 4);
const PHASE_MS = Number(process.env.BENCH_KEYS_PHASE_MS ?? 3_000);
/** BENCH_KEYS_BASELINE=path/to/dist/main.js (of another commit, inside this tree): its phases interleaved with ours. */
const BASELINE = process.env.BENCH_KEYS_BASELINE;

interface Phase {
  samples: number[];
  forwards: number;
  ms: number;
  statuses: Set<number>;
}

/**
 * /health/live, one request at a time on one keep-alive connection, for PHASE_MS while `load` (if any) keeps
 * IN_FLIGHT forwards in flight; adds to `into`.
 */
async function liveUnder(api: string, load: (() => Promise<number>) | null, into: Phase): Promise<void> {
  const probe = new HttpClient(api, { pipelining: 1, keepAliveTimeout: 60_000 });
  let stop = false;
  const loops = load
    ? Array.from({ length: IN_FLIGHT }, async () => {
        while (!stop) {
          into.statuses.add(await load());
          into.forwards++;
        }
      })
    : [];
  try {
    const from = performance.now();
    while (performance.now() - from < PHASE_MS) {
      const start = performance.now();
      const response = await probe.request({ path: '/health/live', method: 'GET' });
      await response.body.arrayBuffer();
      into.samples.push(performance.now() - start);
    }
    into.ms += performance.now() - from;
  } finally {
    stop = true;
    await Promise.all(loops);
    await probe.close();
  }
}

async function signingStall(admin: Client): Promise<void> {
  const database = await benchDatabase(admin, 'keys_signing');
  try {
    const echo = await forkServer('echo-server.js');
    const env = { ...BENCH_API_ENV, DATABASE_URL: database.url, REDIS_URL };
    const api = await startApi(env, { profileDir: process.env.BENCH_API_PROFILE });
    const headers = await cardForward(api.url, database.url, echo.port);
    const token = headers.authorization.slice('Bearer '.length);
    const configs = await fetch(`${api.url}/vault-forward/configs`, {
      headers: { authorization: headers.authorization },
    });
    const configId = ((await configs.json()) as { items: Array<{ id: string }> }).items[0].id;
    const key = generateKeyPairSync('rsa', { modulusLength: 4096 }).privateKey;
    const method = await postJson(`${api.url}/vault-forward/configs/${configId}/authentications`, token, {
      kind: 'http-message-signature',
      label: 'RSA 4096',
      fields: { key_id: 'k', algorithm: 'rsa-pss-sha512', private_key: key.export({ type: 'pkcs8', format: 'pem' }) },
    });
    const apis: Record<string, string> = { this: api.url };
    if (BASELINE) apis.baseline = (await startApi(env, { main: BASELINE })).url;
    const forward = (origin: string, extra: Record<string, string>) => async () => {
      const response = await fetch(`${origin}/vault-forward`, {
        method: 'POST',
        headers: { ...headers, ...extra },
        body: TWO_CARD_BODY,
      });
      await response.arrayBuffer();
      return response.status;
    };
    const signedBy = { 'x-vault-forward-authentications': method.id };
    const loads = {
      idle: () => null,
      'nine unsigned forwards': (origin: string) => forward(origin, {}),
      'nine RSA-4096 signed forwards': (origin: string) => forward(origin, signedBy),
    };
    const phases = new Map<string, Phase>();
    const phase = (name: string) =>
      phases.get(name) ?? phases.set(name, { samples: [], forwards: 0, ms: 0, statuses: new Set() }).get(name)!;
    const warm: Phase = { samples: [], forwards: 0, ms: 0, statuses: new Set() };
    for (const origin of Object.values(apis)) await liveUnder(origin, forward(origin, signedBy), warm);
    // Round-robin, so that every phase of each build meets the machine's varying load alike.
    for (let round = 0; round < ROUNDS; round++)
      for (const [label, load] of Object.entries(loads))
        for (const [build, origin] of Object.entries(apis))
          await liveUnder(origin, load(origin), phase(`${build}: ${label}`));
    console.log(
      `\n/health/live one request at a time, ${ROUNDS} rounds of ${PHASE_MS / 1000} s per phase and build, ` +
        `${IN_FLIGHT} forwards kept in flight\n`,
    );
    console.log('| build: phase | /health/live p50 ms | p95 ms | p99 ms | requests | forwards/s | statuses |');
    console.log('|---|---:|---:|---:|---:|---:|---|');
    const p99 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length * 0.99)];
    for (const [name, r] of phases) {
      const s = stats(r.samples);
      console.log(
        `| ${name} | ${s.median.toFixed(3)} | ${s.p95.toFixed(3)} | ${p99(r.samples).toFixed(3)} | ${s.n} | ` +
          `${((r.forwards * 1000) / r.ms).toFixed(0)} | ${[...r.statuses].join(' ')} |`,
      );
    }
    for (const build of Object.keys(apis)) {
      const of = (label: string) => phases.get(`${build}: ${label}`)!.samples;
      const [idle, signed] = [of('idle'), of('nine RSA-4096 signed forwards')];
      const ratio = (f: (x: number[]) => number) => `${(f(signed) / f(idle)).toFixed(2)}×`;
      console.log(
        `${build}: /health/live under nine signed forwards / idle: p50 ${ratio((x) => stats(x).median)}, ` +
          `p95 ${ratio((x) => stats(x).p95)}, p99 ${ratio(p99)}`,
      );
    }
    await stopChild(api.process);
  } finally {
    await database.drop();
  }
}

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
  if (SECTIONS.includes('signing')) await signingStall(client);
  if (!SECTIONS.includes('providers')) {
    for (const child of children) child.kill('SIGTERM');
    return client.end();
  }
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
