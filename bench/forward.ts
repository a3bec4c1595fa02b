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
 *   (c+rules) (c) with three JSON-path response rules and unmatched_pan mask on the answer (issue 27).
 * Each server runs in its own process; the load generator runs here. BENCH_API_PROFILE=DIR writes a
 * CPU profile of the API process; BENCH_NODE_FLAGS replaces the API's Node flags.
 */
import { ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { TestCa } from '../test/support/test-pki';
import { ADMIN_URL, BENCH_API_ENV, benchDatabase, benchMerchantToken, REDIS_URL, startApi } from './bench-api';
import { children, cpuPerRequest, forkServer, LOAD, LoadResult, loadRun, postJson, TWO_CARD_BODY } from './support';

/** As `npm start` and the Dockerfile run the API; BENCH_NODE_FLAGS overrides ("" for Node's defaults). */
const API_NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '--max-semi-space-size=64').split(' ').filter(Boolean);
const CONNECTIONS = LOAD.connections;
const DURATION = LOAD.durationS;
const BODY = TWO_CARD_BODY;

type Result = LoadResult;

function load(url: string, headers: Record<string, string>, server: ChildProcess | null, body = BODY): Promise<Result> {
  return loadRun(url, headers, server?.pid, body);
}

async function main(): Promise<void> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  const database = await benchDatabase(client, 'fwd');
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
    const { url: api, process: apiProcess } = await startApi(
      { ...BENCH_API_ENV, DATABASE_URL: database.url, REDIS_URL },
      { flags: API_NODE_FLAGS, profileDir: process.env.BENCH_API_PROFILE },
    );

    // A merchant, a key and a token, then a config and two cards through the API itself.
    const token = await benchMerchantToken(database.url);
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
    {
      // Issue 27: (c) whose answer goes through three JSON-path rules (two match, so it is parsed, changed and
      // written again; unmatched_pan mask reads it once more). Last: the rules stay on the config.
      const put = await fetch(`${api}/vault-forward/configs/${config.id}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          response_rules: [
            { match: '$.received', action: 'mask' },
            { match: '$.ok', action: 'remove' },
            { match: '$.card.number', action: 'mask' },
          ],
          unmatched_pan: 'mask',
        }),
      });
      if (!put.ok) throw new Error(`response rules not set: ${put.status}`);
      rows['(c+rules) (c) with three response rules'] = await load(
        `${api}/vault-forward`,
        { ...forwardHeaders, ...cardHeaders },
        apiProcess,
      );
    }
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
    const cbPlus = ours.rps / floor.rps;
    const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
    console.log(`\n(c)/(b) throughput: ${cb.toFixed(2)}  (target ≥ 0.45: ${verdict(cb >= 0.45)})`);
    console.log(`(c)/(a) throughput: ${(ours.rps / direct.rps).toFixed(2)}`);
    console.log(`(b+)/(b) throughput: ${(floor.rps / passthrough.rps).toFixed(2)}  (the vault's unavoidable share)`);
    console.log(
      `(c)/(b+) throughput: ${cbPlus.toFixed(2)}  (the service's own logic; target ≥ 0.8: ${verdict(cbPlus >= 0.8)})`,
    );
    const cpu = cpuPerRequest;
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
    const cpuRatio = cpu(ours) / cpu(passthrough);
    console.log(
      `(c)/(b) API CPU per forward: ${cpuRatio.toFixed(2)}× the bare proxy's  (target ≤ 1.6×: ${verdict(cpuRatio <= 1.6)})`,
    );
    console.log(`p50 added over (a): ${(ours.p50 - direct.p50).toFixed(2)} ms (one connection: npm run bench:latency)`);
    console.log(`p50 added over (b): ${(ours.p50 - passthrough.p50).toFixed(2)} ms`);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await database.drop();
    await client.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
