/**
 * npm run bench:forward — what POST /vault-forward costs, side by side in one run, with autocannon
 * (same connections, duration and body with two card placeholders for every case):
 *   (a) direct calls to a local echo server,
 *   (b) a minimal undici pass-through proxy (bench/passthrough-proxy.ts),
 *   (b×2) the same in two processes (node:cluster, one shared socket), the like-for-like baseline of (c×2),
 *   (b+) the same plus opening the two cards and filling the placeholders (bench/card-proxy.ts): the
 *        floor any vault-forwarding service stands on,
 *   (c) our /vault-forward (the compiled API, real PostgreSQL and Redis, cards from the vault).
 *   (c×2) the same with WEB_CONCURRENCY=2 (two API processes on one port), printed beside (b×2) with the
 *        ratios each way, and the PostgreSQL commits and Redis commands (c) costs per forward.
 *   (c0) the same route without payment methods, to split the vault's cost from the rest.
 *   (c+hmac) (c) with an hmac-signature method; (c+mtls) (c) with a mutual-tls method, to a local
 *        HTTPS echo server that requires a client certificate and counts its TLS handshakes.
 *   the cost table (issue 49, decision 0157; bench/guarantees.ts): (c) with every guarantee on (durable record,
 *        ledger, budgets, bodies, response rules, tracing), with each off on its own, and with all off, each
 *        through its own API process or config, run forward then backward and averaged: forwards/s, API and
 *        PostgreSQL CPU per forward, and what each guarantee costs. BENCH_FORWARD_ROWS=guarantees runs (a),
 *        (b), (c) and the table only.
 *   (c+bodies) one card with its config's record_bodies on, between two runs with it off (the default,
 *        decision 0138), for a 1 KiB body and a 256 KiB one: the CPU the default saves.
 *        BENCH_FORWARD_ROWS=bodies runs these rows only.
 *   (cost) how the cost grows with the work: one card vs ten in a 1 KiB body, and one card in a 1 KiB vs
 *        a 256 KiB body, each with API CPU per forward; the cost of a card and of a KiB are printed.
 *        BENCH_FORWARD_ROWS=cost runs these rows only.
 *   (c-ledger) (c) from a second API process with LEDGER_ENABLED=false, then (c) again: what the disclosure
 *        ledger (decision 0133: two entries per forward, sealed under signed heads) costs per forward, in API
 *        and PostgreSQL CPU. BENCH_FORWARD_ROWS=ledger runs this pair only.
 *   (in), (in+new) inbound routes (issue 50; bench/inbound.ts): a partner's 1 KiB JSON body with one card to
 *        /vault-inbound/{route_id}/…, the same card each time (found by fingerprint) and a new card each request,
 *        beside (b 1 KiB), the bare proxy with the same body: requests/s and added p50 as ratios.
 *        BENCH_FORWARD_ROWS=inbound runs these three rows only.
 * Each server runs in its own process; the load generator runs here. BENCH_DURATION (default 5 s) is each row's
 * measured time after its 2 s warm-up. BENCH_API_PROFILE=DIR writes a CPU profile of the API process;
 * BENCH_NODE_FLAGS replaces the API's Node flags. Issue 49's targets are printed met / NOT met: (c) at least
 * 0.25 of (b)'s forwards per second, and at most 3× its API CPU per forward.
 */
import { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { TestCa } from '../test/support/test-pki';
import { ADMIN_URL, BENCH_API_ENV, benchDatabase, benchMerchantToken, REDIS_URL, startApi } from './bench-api';
import { GuaranteeFigures, GuaranteeRow, printGuaranteeTable, startGuarantees } from './guarantees';
import { inboundRows } from './inbound';
import {
  children,
  cpuPerRequest,
  cpuSpentMs,
  databaseBackendsCpuMs,
  databaseCommits,
  forkServer,
  LOAD,
  LoadResult,
  loadRun,
  postJson,
  redisCommands,
  TWO_CARD_BODY,
} from './support';

/** As `npm start` and the Dockerfile run the API; BENCH_NODE_FLAGS overrides ("" for Node's defaults). */
const API_NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '--max-semi-space-size=64').split(' ').filter(Boolean);
const CONNECTIONS = LOAD.connections;
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
/** Issue 49's targets for (c) against (b): forwards per second, and API CPU per forward. */
const THROUGHPUT_TARGET = 0.25;
const CPU_TARGET = 3;
const BODY = TWO_CARD_BODY;
/** BENCH_FORWARD_ROWS=processes: only (a), (b), (b×2), (b+), (c) and (c×2), for repeated runs of issue 24's item 3. */
const ONLY_PROCESSES = process.env.BENCH_FORWARD_ROWS === 'processes';
/**
 * BENCH_FORWARD_ROWS=hmac: only (c+hmac), after one unmeasured round, for repeated runs of two builds
 * (BENCH_DIST). It prints the measured load's window on the monotonic clock V8's CPU profiles share, so
 * bench/profile-self.ts can cut a profile (BENCH_API_PROFILE) to the load alone.
 */
const ONLY_HMAC = process.env.BENCH_FORWARD_ROWS === 'hmac';
const ONLY_COST = process.env.BENCH_FORWARD_ROWS === 'cost';
const ONLY_LEDGER = process.env.BENCH_FORWARD_ROWS === 'ledger';
/** BENCH_FORWARD_ROWS=guarantees: (a), (b), (c) and the cost table only. */
const ONLY_GUARANTEES = process.env.BENCH_FORWARD_ROWS === 'guarantees';
/** BENCH_FORWARD_ROWS=bodies: only the record_bodies rows (decision 0138). */
const ONLY_BODIES = process.env.BENCH_FORWARD_ROWS === 'bodies';
/** BENCH_FORWARD_ROWS=inbound: only the inbound rows and the bare proxy beside them (issue 50). */
const ONLY_INBOUND = process.env.BENCH_FORWARD_ROWS === 'inbound';
/** Test card numbers (Luhn-valid) for the cost rows' ten cards. */
const TEN_CARDS = [
  '4111111111111111',
  '5555555555554444',
  '4012888888881881',
  '4242424242424242',
  '4000056655665556',
  '5105105105105100',
  '5200828282828210',
  '4000000000000002',
  '4000000000009995',
  '4000000000000077',
];

/** A JSON body of exactly `bytes` bytes with the number and expiry placeholders of `cards` cards, padded. */
function costBody(cards: number, bytes: number): string {
  const entries = Array.from({ length: cards }, (_, i) => ({
    number: `{{ CARD_NUMBER_${i + 1} }}`,
    expiry: `{{ CARD_EXPIRATION_DATE_${i + 1} }}`,
  }));
  const bare = JSON.stringify({ cards: entries, padding: '' });
  if (bare.length > bytes) throw new Error(`${cards} cards do not fit in ${bytes} bytes`);
  return JSON.stringify({ cards: entries, padding: 'x'.repeat(bytes - bare.length) });
}

type Result = LoadResult;

function load(
  url: string,
  headers: Record<string, string>,
  server: ChildProcess | null,
  body: string | (() => string) = BODY,
  durationS = DURATION,
): Promise<Result> {
  return loadRun(url, headers, server?.pid, body, durationS);
}

function printTable(rows: Record<string, Result>, body = `body ${BODY.length} bytes with two card placeholders`): void {
  console.log(`\n${CONNECTIONS} connections, ${DURATION} s each after a 2 s warm-up, ${body}\n`);
  console.log('| case | requests/s | p50 ms | p99 ms | errors | non-2xx | server CPU µs/request (user + system) |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const [label, r] of Object.entries(rows)) {
    const us = r.cpuPerRequestUs;
    const cpu = us ? `${(us.user + us.system).toFixed(0)} (${us.user.toFixed(0)} + ${us.system.toFixed(0)})` : 'n/a';
    console.log(`| ${label} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} | ${cpu} |`);
  }
}

async function main(): Promise<void> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  const database = await benchDatabase(client, 'fwd');
  try {
    const echo = await forkServer('echo-server.js');
    const echoPort = echo.port;
    const proxy = await forkServer('passthrough-proxy.js');
    const proxyPair = await forkServer('passthrough-proxy.js', { BENCH_PROCESSES: '2' });
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
    /** The cost rows: API CPU per forward as the cards and the body grow (issue 36, item 5). */
    const costRows = async (): Promise<Record<string, Result>> => {
      const ten: string[] = [];
      for (const [i, number] of TEN_CARDS.entries()) {
        const card = await postJson(`${api}/payment-methods`, token, {
          method: 'card',
          number,
          expiration_date: `0${(i % 9) + 1}/31`,
        });
        ten.push(card.id as string);
      }
      const run = (cards: number, kib: number) =>
        load(
          `${api}/vault-forward`,
          {
            ...forwardHeaders,
            authorization: `Bearer ${token}`,
            'x-vault-forward-payment-methods': ten.slice(0, cards).join(','),
          },
          apiProcess,
          costBody(cards, kib * 1024),
        );
      await run(1, 1); // unmeasured: the card path's steady state
      const one = await run(1, 1);
      const tenCards = await run(10, 1);
      const big = await run(1, 256);
      const perCard = (cpuPerRequest(tenCards) - cpuPerRequest(one)) / 9;
      const perKib = (cpuPerRequest(big) - cpuPerRequest(one)) / 255;
      costLines.push(
        `cost of one more card: ${perCard.toFixed(0)} µs of API CPU per forward ` +
          `((10 cards − 1 card) / 9; one card in all: ${cpuPerRequest(one).toFixed(0)} µs)`,
        `cost of one more KiB of body: ${perKib.toFixed(1)} µs of API CPU per forward ((256 KiB − 1 KiB) / 255)`,
      );
      return {
        '(cost) 1 card, 1 KiB body': one,
        '(cost) 10 cards, 1 KiB body': tenCards,
        '(cost) 1 card, 256 KiB body': big,
      };
    };
    const costLines: string[] = [];
    // Decision 0133: the same forward through an API with the ledger off, then (c) again right after; each with the
    // PostgreSQL CPU of the run's database's backends (the entries are written there), per forward.
    const ledgerRows = async (): Promise<Record<string, Result>> => {
      const headers = {
        ...forwardHeaders,
        authorization: `Bearer ${token}`,
        'x-vault-forward-payment-methods': cards.map((c: { id: string }) => c.id).join(','),
      };
      const measured = async (url: string, child: ChildProcess) => {
        await load(`${url}/vault-forward`, headers, child);
        const before = databaseBackendsCpuMs(database.url);
        const result = await load(`${url}/vault-forward`, headers, child);
        return { result, postgresUs: (cpuSpentMs(before, databaseBackendsCpuMs(database.url)) * 1000) / result.sent };
      };
      const { url: off, process: offProcess } = await startApi(
        { ...BENCH_API_ENV, DATABASE_URL: database.url, REDIS_URL, LEDGER_ENABLED: 'false' },
        { flags: API_NODE_FLAGS },
      );
      const without = await measured(off, offProcess);
      offProcess.kill('SIGTERM');
      const withLedger = await measured(api, apiProcess);
      const apiUs = cpuPerRequest(withLedger.result) - cpuPerRequest(without.result);
      const postgresUs = withLedger.postgresUs - without.postgresUs;
      costLines.push(
        `ledger cost per forward: ${apiUs.toFixed(0)} µs of API CPU ` +
          `(${cpuPerRequest(withLedger.result).toFixed(0)} on, ${cpuPerRequest(without.result).toFixed(0)} off), ` +
          `${postgresUs.toFixed(0)} µs of PostgreSQL CPU (${withLedger.postgresUs.toFixed(0)} on, ` +
          `${without.postgresUs.toFixed(0)} off); throughput on/off ${(withLedger.result.rps / without.result.rps).toFixed(2)}`,
      );
      return {
        '(c-ledger) (c) with LEDGER_ENABLED=false': without.result,
        '(c) again, right after (c-ledger)': withLedger.result,
      };
    };
    // Decision 0138: records keep bodies only when their config asks (record_bodies, off by default). The same
    // forward with the config asking, then with it off again (a shared machine drifts): what the redacted
    // request and answer on each record cost, for the 181-byte body and for a 256 KiB one.
    const bodiesRows = async (): Promise<Record<string, Result>> => {
      const recordBodies = async (on: boolean) => {
        const put = await fetch(`${api}/vault-forward/configs/${config.id}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ record_bodies: on }),
        });
        if (!put.ok) throw new Error(`record_bodies not set: ${put.status}`);
      };
      const headers = {
        ...forwardHeaders,
        authorization: `Bearer ${token}`,
        'x-vault-forward-payment-methods': cards[0].id,
      };
      const big = costBody(1, 256 * 1024);
      const small = costBody(1, 1024);
      await load(`${api}/vault-forward`, headers, apiProcess, small); // unmeasured: the card path's steady state
      const off = await load(`${api}/vault-forward`, headers, apiProcess, small);
      const offBig = await load(`${api}/vault-forward`, headers, apiProcess, big);
      await recordBodies(true);
      const on = await load(`${api}/vault-forward`, headers, apiProcess, small);
      const onBig = await load(`${api}/vault-forward`, headers, apiProcess, big);
      await recordBodies(false);
      const offAgain = await load(`${api}/vault-forward`, headers, apiProcess, small);
      const offMean = (cpuPerRequest(off) + cpuPerRequest(offAgain)) / 2;
      const saving = (r: Result, base: number) =>
        `${(((cpuPerRequest(r) - base) / cpuPerRequest(r)) * 100).toFixed(1)} %`;
      costLines.push(
        `record_bodies off (the default) saves ${saving(on, offMean)} of API CPU per forward ` +
          `(${cpuPerRequest(on).toFixed(0)} µs on, ${offMean.toFixed(0)} µs off: the mean of the runs before and after), ` +
          `${saving(onBig, cpuPerRequest(offBig))} with a 256 KiB body ` +
          `(${cpuPerRequest(onBig).toFixed(0)} on, ${cpuPerRequest(offBig).toFixed(0)} off)`,
      );
      return {
        '(c) one card, 1 KiB body, record_bodies off (the default)': off,
        '(c+bodies) one card, 1 KiB body, record_bodies on': on,
        '(c) again, 1 KiB body, record_bodies off': offAgain,
        '(c) one card, 256 KiB body, record_bodies off': offBig,
        '(c+bodies) one card, 256 KiB body, record_bodies on': onBig,
      };
    };
    // Issue 49 (decision 0157): the cost table. Each row's API is warmed by an unmeasured run, then the rows run
    // forward and backward and each row's two runs are averaged, so a machine that drifts weighs on all alike.
    const guaranteeTable = async (): Promise<void> => {
      const setup = await startGuarantees({ ...BENCH_API_ENV, DATABASE_URL: database.url, REDIS_URL }, api, token, {
        flags: API_NODE_FLAGS,
      });
      const headers = (target: string) => ({
        'x-vault-forward-url': target,
        'x-vault-forward-http-method': 'POST',
        authorization: `Bearer ${token}`,
        'x-vault-forward-payment-methods': cards.map((c: { id: string }) => c.id).join(','),
      });
      const runs = new Map<GuaranteeRow, GuaranteeFigures[]>();
      for (const row of setup.rows) await load(`${row.api}/vault-forward`, headers(row.target), row.process, BODY, 2);
      for (const pass of [setup.rows, [...setup.rows].reverse()])
        for (const row of pass) {
          const before = databaseBackendsCpuMs(database.url);
          const r = await load(`${row.api}/vault-forward`, headers(row.target), row.process);
          const postgresCpuUs = (cpuSpentMs(before, databaseBackendsCpuMs(database.url)) * 1000) / r.sent;
          if (r.non2xx + r.errors > 0) throw new Error(`${row.label}: ${r.non2xx} non-2xx, ${r.errors} errors`);
          const figures = { rps: r.rps, p50Ms: r.p50, apiCpuUs: cpuPerRequest(r), postgresCpuUs };
          runs.set(row, [...(runs.get(row) ?? []), figures]);
        }
      for (const child of new Set(setup.rows.map((row) => row.process))) child.kill('SIGTERM');
      const mean = (list: GuaranteeFigures[], key: keyof GuaranteeFigures) =>
        list.reduce((sum, f) => sum + (f[key] ?? 0), 0) / list.length;
      console.log(
        `\nThe cost table (decision 0157): two cards, ${CONNECTIONS} connections, ${DURATION} s a run, each row the ` +
          'mean of a forward and a backward pass; bodies and response rules measured on in "all on"',
      );
      printGuaranteeTable(
        [...runs].map(([row, list]) => ({
          row,
          f: {
            rps: mean(list, 'rps'),
            p50Ms: mean(list, 'p50Ms'),
            apiCpuUs: mean(list, 'apiCpuUs'),
            postgresCpuUs: mean(list, 'postgresCpuUs'),
          },
        })),
        `${CONNECTIONS} connections`,
      );
    };
    if (ONLY_LEDGER) {
      printTable(await ledgerRows());
      console.log(`\n${costLines.join('\n')}`);
      return;
    }
    if (ONLY_BODIES) {
      printTable(await bodiesRows());
      console.log(`\n${costLines.join('\n')}`);
      return;
    }
    if (ONLY_COST) {
      printTable(await costRows());
      console.log(`\n${costLines.join('\n')}`);
      return;
    }
    const inbound = () =>
      inboundRows({
        api,
        apiProcess,
        token,
        echoPort,
        load,
        proxyPort: proxy.port,
        proxyProcess: proxy.process,
        commits: () => databaseCommits(client, database.url),
        redisCommands: () => redisCommands(REDIS_URL),
      });
    if (ONLY_INBOUND) {
      const { rows: inboundOnly, lines } = await inbound();
      printTable(inboundOnly, 'body 1 KiB of JSON with one card number');
      console.log(`\n${lines.join('\n')}`);
      console.log(`load average at the end: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
      return;
    }
    const cardHeaders = {
      authorization: `Bearer ${token}`,
      'x-vault-forward-payment-methods': cards.map((c: { id: string }) => c.id).join(','),
    };
    const signedHeaders = { ...forwardHeaders, ...cardHeaders, 'x-vault-forward-authentications': hmacMethod.id };
    if (ONLY_HMAC) {
      await load(`${api}/vault-forward`, signedHeaders, apiProcess);
      const startUs = process.hrtime.bigint() / 1000n;
      const signedOnly = await load(`${api}/vault-forward`, signedHeaders, apiProcess);
      const endUs = process.hrtime.bigint() / 1000n;
      printTable({ '(c+hmac) (c) with an hmac-signature method': signedOnly });
      // The window and the requests in profile-self's form (the load's warm-up included in both).
      console.log(`\nprofile window: @${startUs}-${endUs}/${signedOnly.sent}`);
      return;
    }
    const direct = await load(target, {}, echo.process);
    const passthrough = await load(`http://127.0.0.1:${proxy.port}/`, forwardHeaders, proxy.process);
    const oursHeaders = {
      ...forwardHeaders,
      authorization: `Bearer ${token}`,
      'x-vault-forward-payment-methods': cards.map((c: { id: string }) => c.id).join(','),
    };
    // What one forward costs the database and Redis (the run's own database; Redis as a whole, so a private
    // one via BENCH_REDIS_URL gives a clean count): warm-up included, divided by every request sent.
    // One unmeasured round first: the API's first load since its start did not reach the card path's steady
    // state within load()'s 2 s warm-up (its (c) row cost 30–50 % more CPU than "(c) again" minutes later).
    await load(`${api}/vault-forward`, oursHeaders, apiProcess);
    const commitsBefore = await databaseCommits(client, database.url);
    const redisBefore = await redisCommands(REDIS_URL);
    const postgresCpuBefore = databaseBackendsCpuMs(database.url);
    const oursStartUs = process.hrtime.bigint() / 1000n;
    const ours = await load(`${api}/vault-forward`, oursHeaders, apiProcess);
    // (c)'s window and requests in profile-self's form, for a profile of the API (BENCH_API_PROFILE).
    const oursWindow = `@${oursStartUs}-${process.hrtime.bigint() / 1000n}/${ours.sent}`;
    // The run's database's backends only: other users of a shared server are left out, and so is the WAL writer.
    const postgresUsPerForward =
      (cpuSpentMs(postgresCpuBefore, databaseBackendsCpuMs(database.url)) * 1000) / ours.sent;
    const commitsPerForward = ((await databaseCommits(client, database.url)) - commitsBefore) / ours.sent;
    const redisPerForward = ((await redisCommands(REDIS_URL)) - redisBefore) / ours.sent;
    const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
    const cpu = cpuPerRequest;
    /** Issue 49's targets, (c) against (b) measured in this run. */
    const printTargets = () => {
      const throughput = ours.rps / passthrough.rps;
      const cpuRatio = cpu(ours) / cpu(passthrough);
      console.log(
        `\n(c)/(b) forwards/s: ${throughput.toFixed(2)}  (target ≥ ${THROUGHPUT_TARGET}, issue 49: ` +
          `${verdict(throughput >= THROUGHPUT_TARGET)})`,
      );
      console.log(
        `(c)/(b) API CPU per forward: ${cpuRatio.toFixed(2)}× the bare proxy's (${cpu(ours).toFixed(0)} / ` +
          `${cpu(passthrough).toFixed(0)} µs; target ≤ ${CPU_TARGET}×, issue 49: ${verdict(cpuRatio <= CPU_TARGET)})`,
      );
    };
    if (ONLY_GUARANTEES) {
      console.log(`\n(c) profile window: ${oursWindow}`);
      printTable({
        '(a) direct to downstream': direct,
        '(b) undici pass-through proxy': passthrough,
        '(c) POST /vault-forward': ours,
      });
      await guaranteeTable();
      printTargets();
      return;
    }
    const passthroughPair = await load(`http://127.0.0.1:${proxyPair.port}/`, forwardHeaders, proxyPair.process);
    const floor = await load(`http://127.0.0.1:${cardProxy.port}/`, forwardHeaders, cardProxy.process);
    // Two API processes on one port (WEB_CONCURRENCY=2), the single one idle meanwhile.
    const { url: apiPair, process: apiPairProcess } = await startApi(
      { ...BENCH_API_ENV, DATABASE_URL: database.url, REDIS_URL, WEB_CONCURRENCY: '2' },
      { flags: API_NODE_FLAGS },
    );
    const oursPair = await load(`${apiPair}/vault-forward`, oursHeaders, apiPairProcess);
    apiPairProcess.kill('SIGTERM');
    // Issue 24 item 3: one and two processes of each, side by side, the ratios each way.
    const printProcesses = () => {
      console.log(
        `\nTwo processes: (b×2)/(b) ${(passthroughPair.rps / passthrough.rps).toFixed(2)}, (c×2)/(c) ` +
          `${(oursPair.rps / ours.rps).toFixed(2)}; (c)/(b) ${(ours.rps / passthrough.rps).toFixed(2)}, (c×2)/(b×2) ` +
          `${(oursPair.rps / passthroughPair.rps).toFixed(2)}; (b)/(c) ${(passthrough.rps / ours.rps).toFixed(2)}, (b×2)/(c×2) ` +
          `${(passthroughPair.rps / oursPair.rps).toFixed(2)}`,
      );
      console.log(
        `CPU per forward: (c×2) ${cpuPerRequest(oursPair).toFixed(0)} µs vs (c) ${cpuPerRequest(ours).toFixed(0)} µs; (b×2) ` +
          `${cpuPerRequest(passthroughPair).toFixed(0)} µs vs (b) ${cpuPerRequest(passthrough).toFixed(0)} µs (all processes of the group)`,
      );
      const split = (r: Result) => r.byProcess.map((p) => p.us.toFixed(0)).join(' + ');
      console.log(`  by process, supervisor first: (c×2) ${split(oursPair)}; (b×2) ${split(passthroughPair)}`);
      console.log(
        `(c) per forward: ${commitsPerForward.toFixed(2)} PostgreSQL commits, ${redisPerForward.toFixed(2)} Redis ` +
          `commands (${REDIS_URL}); PostgreSQL backends' CPU ${postgresUsPerForward.toFixed(0)} µs`,
      );
      console.log(`(c) profile window: ${oursWindow}`);
      console.log(`load average at the end: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
    };
    // The rows of every run; a full run adds its own below.
    const rows: Record<string, Result> = {
      '(a) direct to downstream': direct,
      '(b) undici pass-through proxy': passthrough,
      '(b×2) (b) in 2 processes (node:cluster, one shared socket)': passthroughPair,
      '(b+) pass-through + opening the cards': floor,
      '(c) POST /vault-forward': ours,
      '(c×2) (c) with WEB_CONCURRENCY=2': oursPair,
    };
    if (ONLY_PROCESSES) {
      printTable(rows);
      printProcesses();
      return;
    }

    const signed = await load(`${api}/vault-forward`, signedHeaders, apiProcess);
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
    Object.assign(rows, await costRows());
    const { rows: inboundOnes, lines: inboundLines } = await inbound();
    Object.assign(rows, inboundOnes);
    printTable(rows);
    console.log(`\n${costLines.join('\n')}`);
    console.log(inboundLines.join('\n'));
    const cbPlus = ours.rps / floor.rps;
    console.log(`(c)/(a) throughput: ${(ours.rps / direct.rps).toFixed(2)}`);
    console.log(`(b+)/(b) throughput: ${(floor.rps / passthrough.rps).toFixed(2)}  (the vault's unavoidable share)`);
    console.log(`(c)/(b+) throughput: ${cbPlus.toFixed(2)}  (the service's own logic)`);
    const hmacExtra = cpu(signed) / cpu(ours) - 1;
    console.log(
      `(c+hmac)/(c) API CPU per request: ${hmacExtra >= 0 ? '+' : ''}${(hmacExtra * 100).toFixed(1)} %  (target ` +
        `≤ 15 %: ${verdict(hmacExtra <= 0.15)})`,
    );
    const mtlsRequests = Math.round(mutual.rps * DURATION);
    console.log(
      `(c+mtls) TLS handshakes at the downstream: ${mtlsHandshakes} for ~${Math.round(mutual.rps * mtlsSeconds)} ` +
        `requests (warm-up included; ${CONNECTIONS} connections, ${mtlsRequests} measured)`,
    );
    console.log(`p50 added over (a): ${(ours.p50 - direct.p50).toFixed(2)} ms (one connection: npm run bench:latency)`);
    console.log(`p50 added over (b): ${(ours.p50 - passthrough.p50).toFixed(2)} ms`);
    printProcesses();
    await guaranteeTable();
    printTargets();
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
