/**
 * npm run bench:forward — what POST /vault-forward costs, side by side in one run, with autocannon
 * (same connections, duration and body with two card placeholders for every case):
 *   (a) direct calls to a local echo server,
 *   (b) a minimal undici pass-through proxy (bench/passthrough-proxy.ts),
 *   (b+) the same plus opening the two cards and filling the placeholders (bench/card-proxy.ts): the
 *        floor any vault-forwarding service stands on,
 *   (c) our /vault-forward (the compiled API, real PostgreSQL and Redis, cards from the vault).
 *   (c0) the same route without payment methods, to split the vault's cost from the rest.
 *   (c+hmac) (c) with an hmac-signature method; (c+mtls) (c) with a mutual-tls method, to a local
 *        HTTPS echo server that requires a client certificate and counts its TLS handshakes.
 * Each server runs in its own process; the load generator runs here. BENCH_API_PROFILE=DIR writes a
 * CPU profile of the API process; BENCH_NODE_FLAGS replaces the API's Node flags.
 */
import 'reflect-metadata';
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import autocannon from 'autocannon';
import { ApiKey } from '../src/auth/api-key.entity';
import { SharedCaches } from '../src/queue/shared-cache';
import { ApiKeysService } from '../src/auth/api-keys.service';
import { signToken } from '../src/auth/token-signer';
import { createDataSource } from '../src/database/data-source';
import { Metrics } from '../src/metrics/metrics.service';
import { TestCa } from '../test/support/test-pki';
import { children, cpuMs, forkServer, freePort, postJson } from './support';

/** As `npm start` and the Dockerfile run the API; BENCH_NODE_FLAGS overrides ("" for Node's defaults). */
const API_NODE_FLAGS = '--max-semi-space-size=64';
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROOT = join(__dirname, '..', '..');
const BODY = JSON.stringify({
  cards: [
    { number: '{{ CARD_NUMBER_1 }}', expiry: '{{ CARD_EXPIRATION_DATE_1 }}', cvv: '123' },
    { number: '{{ CARD_NUMBER_2 }}', expiry: '{{ CARD_EXPIRATION_DATE_2 }}', cvv: '456' },
  ],
});

/** Starts the compiled API (quiet logs) and waits until it is ready. */
async function startApi(env: Record<string, string>): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const profile = process.env.BENCH_API_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_API_PROFILE}`]
    : [];
  const flags = (process.env.BENCH_NODE_FLAGS ?? API_NODE_FLAGS).split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...profile, ...flags, join(ROOT, 'dist/main.js')], {
    env: { PATH: process.env.PATH!, PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`API exited with ${child.exitCode}`);
    const ready = await fetch(`${url}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return { url, process: child };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('API did not become ready');
}

interface Result {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** CPU the serving process spent per request, in µs (user, system): what ratios cannot show on a shared machine. */
  cpuPerRequestUs: { user: number; system: number } | null;
}

async function load(
  url: string,
  headers: Record<string, string>,
  server: ChildProcess | null,
  body = BODY,
): Promise<Result> {
  const options = {
    url,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', ...headers },
    body,
    connections: CONNECTIONS,
  };
  await autocannon({ ...options, duration: 2 }); // warm-up: pools, JIT, caches
  const before = cpuMs(server?.pid);
  const result = await autocannon({ ...options, duration: DURATION });
  const after = cpuMs(server?.pid);
  const perRequest = (a: number, b: number) => ((a - b) * 1000) / result.requests.total;
  const cpuPerRequestUs =
    before && after
      ? { user: perRequest(after.user, before.user), system: perRequest(after.system, before.system) }
      : null;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    cpuPerRequestUs,
  };
}

async function main(): Promise<void> {
  const admin = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const name = `vault_forward_bench_fwd_${Date.now()}`;
  const client = new Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  const databaseUrl = Object.assign(new URL(admin), { pathname: `/${name}` }).toString();
  try {
    const echo = await forkServer('echo-server.js');
    const echoPort = echo.port;
    const proxy = await forkServer('passthrough-proxy.js');
    const cardProxy = await forkServer('card-proxy.js');
    const pki = TestCa.create('Bench CA');
    const serverCert = pki.issue('127.0.0.1', 'server');
    const clientCert = pki.issue('bench-client', 'client');
    const mtlsEcho = await forkServer('mtls-echo-server.js', {
      BENCH_TLS_CERT: serverCert.cert,
      BENCH_TLS_KEY: serverCert.key,
      BENCH_TLS_CLIENT_CA: pki.cert,
    });
    const handshakes = () =>
      new Promise<number>((resolve) => {
        mtlsEcho.process.once('message', (m: { handshakes: number }) => resolve(m.handshakes));
        mtlsEcho.process.send('count');
      });
    const { url: api, process: apiProcess } = await startApi({
      DATABASE_URL: databaseUrl,
      REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
      LOG_LEVEL: 'warn',
      FORWARD_INSECURE_HOSTS: '127.0.0.1',
      CURSOR_SECRET: 'bench-cursor-secret-bench-cursor-secret',
      VAULT_MASTER_KEYS: `bench:${Buffer.alloc(32, 7).toString('base64')}`,
    });

    // A merchant, a key and a token, then a config and two cards through the API itself.
    const db = createDataSource({ url: databaseUrl, poolSize: 1, entities: [ApiKey] });
    await db.initialize();
    await db.query(`INSERT INTO merchant_accounts (id, display_name) VALUES ('bench', 'Bench')`);
    // create() needs the repository only.
    const key = await new ApiKeysService(db.getRepository(ApiKey), new SharedCaches(null, null, new Metrics())).create(
      'bench',
      'ES256',
    );
    await db.destroy();
    const token = await signToken({ privateKeyPem: key.privateKeyPem, keyId: key.id, scopes: ['*.write', '*.read'] });
    const config = await postJson(`${api}/vault-forward/configs`, token, {
      display_name: 'Echo',
      hosts: [`127.0.0.1:${echoPort}`, `127.0.0.1:${mtlsEcho.port}`],
    });
    const hmacMethod = await postJson(`${api}/vault-forward/configs/${config.id}/authentications`, token, {
      kind: 'hmac-signature',
      label: 'bench',
      fields: {
        secret: 'bench-hmac-secret-0123456789abcdef',
        algorithm: 'sha256',
        encoding: 'hex',
        header: 'x-signature',
        timestamp_header: 'x-timestamp',
      },
    });
    const mtlsMethod = await postJson(`${api}/vault-forward/configs/${config.id}/authentications`, token, {
      kind: 'mutual-tls',
      label: 'bench',
      fields: { certificate: clientCert.cert, private_key: clientCert.key, ca_certificates: pki.cert },
    });
    const cards = [
      await postJson(`${api}/payment-methods`, token, {
        method: 'card',
        number: '4111111111111111',
        expiration_date: '12/30',
      }),
      await postJson(`${api}/payment-methods`, token, {
        method: 'card',
        number: '5555555555554444',
        expiration_date: '01/31',
      }),
    ];

    const target = `http://127.0.0.1:${echoPort}/charge`;
    const forwardHeaders = { 'x-vault-forward-url': target, 'x-vault-forward-http-method': 'POST' };
    const direct = await load(target, {}, echo.process);
    const passthrough = await load(`http://127.0.0.1:${proxy.port}/`, forwardHeaders, proxy.process);
    const floor = await load(`http://127.0.0.1:${cardProxy.port}/`, forwardHeaders, cardProxy.process);
    const ours = await load(
      `${api}/vault-forward`,
      {
        ...forwardHeaders,
        authorization: `Bearer ${token}`,
        'x-vault-forward-payment-methods': cards.map((c: { id: string }) => c.id).join(','),
      },
      apiProcess,
    );

    const cardHeaders = {
      authorization: `Bearer ${token}`,
      'x-vault-forward-payment-methods': cards.map((c: { id: string }) => c.id).join(','),
    };
    const signed = await load(
      `${api}/vault-forward`,
      { ...forwardHeaders, ...cardHeaders, 'x-vault-forward-authentications': hmacMethod.id },
      apiProcess,
    );
    const handshakesBefore = await handshakes();
    const mtlsStarted = Date.now();
    const mutual = await load(
      `${api}/vault-forward`,
      {
        'x-vault-forward-url': `https://127.0.0.1:${mtlsEcho.port}/charge`,
        'x-vault-forward-http-method': 'POST',
        ...cardHeaders,
        'x-vault-forward-authentications': mtlsMethod.id,
      },
      apiProcess,
    );
    const mtlsHandshakes = (await handshakes()) - handshakesBefore;
    const mtlsSeconds = (Date.now() - mtlsStarted) / 1000;

    const rows: Record<string, Result> = {
      '(a) direct to downstream': direct,
      '(b) undici pass-through proxy': passthrough,
      '(b+) pass-through + opening the cards': floor,
      '(c) POST /vault-forward': ours,
    };
    {
      // The same route without payment methods (placeholders escaped): no vault lookup, no decryption.
      // The difference to (c) is the vault's share; the rest is the framework, auth and checks.
      rows['(c0) /vault-forward without cards'] = await load(
        `${api}/vault-forward`,
        { ...forwardHeaders, authorization: `Bearer ${token}` },
        apiProcess,
        BODY.replace(/\{\{/g, '\\\\{{'),
      );
    }
    rows['(c+hmac) (c) with an hmac-signature method'] = signed;
    rows['(c+mtls) (c) with a mutual-tls method, TLS downstream'] = mutual;
    console.log(
      `\n${CONNECTIONS} connections, ${DURATION} s each after a 2 s warm-up, body ${BODY.length} bytes with two card placeholders\n`,
    );
    console.log('| case | requests/s | p50 ms | p99 ms | errors | non-2xx | server CPU µs/request (user + system) |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const [label, r] of Object.entries(rows)) {
      const us = r.cpuPerRequestUs;
      const cpu = us ? `${(us.user + us.system).toFixed(0)} (${us.user.toFixed(0)} + ${us.system.toFixed(0)})` : 'n/a';
      console.log(`| ${label} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} | ${cpu} |`);
    }
    const cb = ours.rps / passthrough.rps;
    console.log(`\n(c)/(b) throughput: ${cb.toFixed(2)}  (target ≥ 0.6: ${cb >= 0.6 ? 'met' : 'NOT met'})`);
    console.log(`(c)/(a) throughput: ${(ours.rps / direct.rps).toFixed(2)}`);
    console.log(`(b+)/(b) throughput: ${(floor.rps / passthrough.rps).toFixed(2)}  (the vault's unavoidable share)`);
    console.log(`(c)/(b+) throughput: ${(ours.rps / floor.rps).toFixed(2)}  (the service's own logic)`);
    const cpu = (r: Result) => (r.cpuPerRequestUs ? r.cpuPerRequestUs.user + r.cpuPerRequestUs.system : NaN);
    const hmacExtra = cpu(signed) / cpu(ours) - 1;
    console.log(
      `(c+hmac)/(c) API CPU per request: ${hmacExtra >= 0 ? '+' : ''}${(hmacExtra * 100).toFixed(1)} %  (target ` +
        `≤ 15 %: ${hmacExtra <= 0.15 ? 'met' : 'NOT met'})`,
    );
    const mtlsRequests = Math.round(mutual.rps * DURATION);
    console.log(
      `(c+mtls) TLS handshakes at the downstream: ${mtlsHandshakes} for ~${Math.round(mutual.rps * mtlsSeconds)} ` +
        `requests (warm-up included; ${CONNECTIONS} connections, ${mtlsRequests} measured)`,
    );
    const added = ours.p50 - direct.p50;
    console.log(`p50 added over (a): ${added.toFixed(2)} ms  (target ≤ 1 ms: ${added <= 1 ? 'met' : 'NOT met'})`);
    console.log(`p50 added over (b): ${(ours.p50 - passthrough.p50).toFixed(2)} ms`);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
