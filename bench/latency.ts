/**
 * npm run bench:latency — what one request costs when nothing else waits: ONE keep-alive connection per
 * case, one request at a time, the cases round-robin (a, b, c, …, a, b, c, …) so they share the
 * machine's state and their differences are fair. Prints p50/p99 per case and what each forward adds
 * over a direct call to the downstream (a) and over a bare undici pass-through proxy (b).
 *   (a) direct POST to a local echo server          (b) the bare proxy (bench/passthrough-proxy.ts)
 *   (f) GET /live from a bare Fastify instance      (n) the same from a bare NestJS app on Fastify
 *   GET /health/live (no auth)                     GET /buyers/{unknown} (authenticated 404, no row)
 *   GET /buyers?limit=1 and ?limit=20 (lists)      POST /vault-forward without cards / with one card
 * (f) and (n) are the framework's floor (bench/bare-fastify.ts): what /health/live adds beyond (n) is our
 * pipeline (logging, async context, instrumentation, interceptors, the problem filter).
 * The cost table (issue 49, decision 0157; bench/guarantees.ts): the one-card forward through an API with every
 * guarantee on, with each off on its own and with all off (an API process per setting, all in the same
 * round-robin), and what each costs in added p50 and in API CPU per forward (run alone); issue 49's target, a
 * card forward adding at most 4× what the bare proxy adds over (a), is printed met / NOT met.
 * BENCH_LATENCY_ROUNDS (default 1,000) after 300 warm-up rounds, BENCH_LATENCY_ALONE (default 1,000) requests of
 * each case alone; BENCH_API_PROFILE=DIR writes a CPU profile of the API process. BENCH_TRACING=1 adds a second
 * API process with OpenTelemetry on (OTEL_EXPORTER_OTLP_ENDPOINT at a local sink that answers 200) and its list and
 * card-forward cases, beside the same cases with tracing off (decision 0109).
 * BENCH_BASELINE_MAIN=PATH (a dist/main.js built from another commit, kept inside this
 * tree so it finds node_modules) starts that API too, on the same database, and adds its API rows to the
 * same round-robin: a before/after in one interleaved run. Each API's CPU per request (all its cases
 * together) is printed beside, read from /proc, and then each route's own, from ROUTE_CPU_REQUESTS of it
 * alone. The two builds are compared on equal terms: the set-up requests go to a third API process
 * stopped before the measured ones start; each case of one build sits next to the same case of the
 * other, which of the two goes first alternating every round; and BENCH_BASELINE_FIRST=1 starts the
 * baseline first (run the bench once each way: an A/A run, the same build twice, showed the API started
 * first 2–3 % dearer per request when it also took the set-up and always went first).
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Client as Pg } from 'pg';
import { Client } from 'undici';
import { ADMIN_URL, BENCH_API_ENV, benchDatabase, benchMerchantToken, REDIS_URL, startApi } from './bench-api';
import { GUARANTEE_ROWS, GuaranteeRow, printGuaranteeTable, startGuarantees } from './guarantees';
import { children, cpuMs, forkServer, postJson, stopChild } from './support';

const ROUNDS = Number(process.env.BENCH_LATENCY_ROUNDS ?? 1_000);
const TRACING = process.env.BENCH_TRACING === '1';
const WARMUP = 300;
/** Requests of each case run alone after the round-robin, to read what that route costs its server. */
const ROUTE_CPU_REQUESTS = Number(process.env.BENCH_LATENCY_ALONE ?? 1_000);
/** Requests of one case in a row in that phase, before the next case's turn. */
const ALONE_BLOCK = 100;
/** Issue 49: a card forward adds at most this many times what the bare proxy (b) adds over a direct call (a). */
const CARD_FORWARD_TARGET_TIMES_PROXY = 4;
/** Targets (issue 36), p50 added over a direct call (a): /health/live, an authenticated list of one. */
const LIVE_TARGET_MS = 0.15;
const LIST_OF_ONE_TARGET_MS = 0.4;
/** Issue 36: the forward's own request path stays while it saves more CPU per forward than this over a Nest route. */
const FAST_PATH_KEPT_OVER_US = 50;
const BASELINE_MAIN = process.env.BENCH_BASELINE_MAIN;
const BASELINE_FIRST = process.env.BENCH_BASELINE_FIRST === '1';
const BODY = JSON.stringify({ card: { number: '{{ CARD_NUMBER_1 }}', expiry: '{{ CARD_EXPIRATION_DATE_1 }}' } });

interface Case {
  origin: string;
  path: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  expect: number;
}

/** The cost table's case of a row (bench/guarantees.ts). */
const costCase = (row: GuaranteeRow) => `POST /vault-forward, one card, ${row.label}`;

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function main(): Promise<void> {
  const admin = new Pg({ connectionString: ADMIN_URL });
  await admin.connect();
  const database = await benchDatabase(admin, 'latency');
  const clients: Client[] = [];
  try {
    const echo = await forkServer('echo-server.js');
    const proxy = await forkServer('passthrough-proxy.js');
    const bareFastify = await forkServer('bare-fastify.js', { BENCH_BARE: 'fastify' });
    const bareNest = await forkServer('bare-fastify.js', { BENCH_BARE: 'nest' });
    const fastifyOrigin = `http://127.0.0.1:${bareFastify.port}`;
    const nestOrigin = `http://127.0.0.1:${bareNest.port}`;
    const env = { ...BENCH_API_ENV, DATABASE_URL: database.url, REDIS_URL };
    // The set-up goes through an API of its own (which also migrates the database), gone before the
    // measured ones start: neither of those has served more than the other.
    const setUp = await startApi(env);
    const token = await benchMerchantToken(database.url);
    const config = { display_name: 'Echo', hosts: [`127.0.0.1:${echo.port}`] };
    await postJson(`${setUp.url}/vault-forward/configs`, token, config);
    const card = await postJson(`${setUp.url}/payment-methods`, token, {
      method: 'card',
      number: '4111111111111111',
      expiration_date: '12/30',
    });
    for (let i = 0; i < 25; i++) await postJson(`${setUp.url}/buyers`, token, { display_name: `Buyer ${i}` });
    // The cost table's APIs and targets (their configs made through the set-up API, before it stops).
    const guarantees = await startGuarantees(env, setUp.url, token);
    await stopChild(setUp.process);
    const startMain = () => startApi(env, { profileDir: process.env.BENCH_API_PROFILE });
    const startBaseline = () => (BASELINE_MAIN ? startApi(env, { main: BASELINE_MAIN }) : Promise.resolve(null));
    let apiStarted: Awaited<ReturnType<typeof startApi>>;
    let baseline: Awaited<ReturnType<typeof startApi>> | null;
    if (BASELINE_FIRST) {
      baseline = await startBaseline();
      apiStarted = await startMain();
    } else {
      apiStarted = await startMain();
      baseline = await startBaseline();
    }
    const { url: api, process: apiProcess } = apiStarted;
    // The same database, a second process with tracing on; its spans go to a sink that only answers 200.
    const traced = TRACING
      ? await startApi({
          ...env,
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(await forkServer('echo-server.js')).port}`,
        })
      : null;

    const target = `http://127.0.0.1:${echo.port}/charge`;
    const auth = { authorization: `Bearer ${token}` };
    const forward = { 'x-vault-forward-url': target, 'x-vault-forward-http-method': 'POST' };
    const json = { 'content-type': 'application/json' };
    const proxyOrigin = `http://127.0.0.1:${proxy.port}`;
    const cases: Record<string, Case> = {
      '(a) direct to downstream': {
        origin: target,
        path: '/charge',
        method: 'POST',
        headers: json,
        body: BODY,
        expect: 200,
      },
      '(b) bare pass-through proxy': {
        origin: proxyOrigin,
        path: '/',
        method: 'POST',
        headers: { ...json, ...forward },
        body: BODY,
        expect: 200,
      },
      '(f) bare Fastify route': {
        origin: fastifyOrigin,
        path: '/live',
        method: 'GET',
        expect: 200,
      },
      '(n) bare NestJS route on Fastify': {
        origin: nestOrigin,
        path: '/live',
        method: 'GET',
        expect: 200,
      },
      'GET /health/live (no auth)': { origin: api, path: '/health/live', method: 'GET', expect: 200 },
      'GET /buyers/{unknown} (auth, 404)': {
        origin: api,
        path: `/buyers/${randomUUID()}`,
        method: 'GET',
        headers: auth,
        expect: 404,
      },
      'GET /buyers?limit=1 (list)': {
        origin: api,
        path: '/buyers?limit=1',
        method: 'GET',
        headers: auth,
        expect: 200,
      },
      'GET /buyers?limit=20 (list)': {
        origin: api,
        path: '/buyers?limit=20',
        method: 'GET',
        headers: auth,
        expect: 200,
      },
      'POST /vault-forward, no card': {
        origin: api,
        path: '/vault-forward',
        method: 'POST',
        headers: { ...json, ...auth, ...forward },
        // Escaped placeholders: the same bytes, nothing to fill.
        body: BODY.replace(/\{\{/g, '\\\\{{'),
        expect: 200,
      },
      'POST /vault-forward, one card': {
        origin: api,
        path: '/vault-forward',
        method: 'POST',
        headers: { ...json, ...auth, ...forward, 'x-vault-forward-payment-methods': card.id },
        body: BODY,
        expect: 200,
      },
      ...Object.fromEntries(
        guarantees.rows.map((row) => [
          costCase(row),
          {
            origin: row.api,
            path: '/vault-forward',
            method: 'POST' as const,
            headers: {
              ...json,
              ...auth,
              'x-vault-forward-url': row.target,
              'x-vault-forward-http-method': 'POST',
              'x-vault-forward-payment-methods': card.id,
            },
            body: BODY,
            expect: 200,
          },
        ]),
      ),
      ...(traced
        ? {
            'GET /buyers?limit=20 (list), tracing on': {
              origin: traced.url,
              path: '/buyers?limit=20',
              method: 'GET' as const,
              headers: auth,
              expect: 200,
            },
            'POST /vault-forward, one card, tracing on': {
              origin: traced.url,
              path: '/vault-forward',
              method: 'POST' as const,
              headers: { ...json, ...auth, ...forward, 'x-vault-forward-payment-methods': card.id },
              body: BODY,
              expect: 200,
            },
          }
        : {}),
    };

    // Each case of the API followed by its baseline twin, so the pair shares the machine's state.
    if (baseline) {
      for (const [name, c] of Object.entries(cases)) {
        delete cases[name];
        cases[name] = c;
        if (c.origin === api) cases[`[baseline] ${name}`] = { ...c, origin: baseline.url };
      }
    }
    const runs = Object.entries(cases).map(([name, c]) => {
      const client = new Client(new URL(c.origin).origin, { pipelining: 1, keepAliveTimeout: 60_000 });
      clients.push(client);
      const samples: number[] = [];
      const once = async (record: boolean) => {
        const start = performance.now();
        const response = await client.request({ path: c.path, method: c.method, headers: c.headers, body: c.body });
        await response.body.arrayBuffer();
        const elapsed = performance.now() - start;
        if (response.statusCode !== c.expect) throw new Error(`${name}: ${response.statusCode}, expected ${c.expect}`);
        if (record) samples.push(elapsed);
      };
      return { name, origin: c.origin, once, samples };
    });
    const apiCpu: Array<{ label: string; origin: string; pid: number | undefined; before?: ReturnType<typeof cpuMs> }> =
      [
        { label: 'API', origin: api, pid: apiProcess.pid },
        ...(baseline ? [{ label: '[baseline] API', origin: baseline.url, pid: baseline.process.pid }] : []),
        { label: '(f) bare Fastify', origin: fastifyOrigin, pid: bareFastify.process.pid },
        { label: '(n) bare NestJS on Fastify', origin: nestOrigin, pid: bareNest.process.pid },
        ...[...new Map(guarantees.rows.map((row) => [row.api, row])).values()].map((row) => ({
          label: `cost-table API (${guarantees.rows
            .filter((r) => r.api === row.api)
            .map((r) => r.label)
            .join(', ')})`,
          origin: row.api,
          pid: row.process.pid,
        })),
      ];
    // Which build of a pair goes first alternates every round.
    const twinOf = (i: number) => (runs[i + 1]?.name === `[baseline] ${runs[i].name}` ? i + 1 : null);
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      if (round === WARMUP) for (const p of apiCpu) p.before = cpuMs(p.pid);
      for (let i = 0; i < runs.length; i++) {
        const twin = twinOf(i);
        const pair = twin === null ? [runs[i]] : round % 2 === 0 ? [runs[i], runs[twin]] : [runs[twin], runs[i]];
        for (const run of pair) await run.once(round >= WARMUP);
        if (twin !== null) i = twin;
      }
    }
    const apiRequests = (origin: string) => Object.values(cases).filter((c) => c.origin === origin).length * ROUNDS;
    const cpuLines = apiCpu.map((p) => {
      const after = cpuMs(p.pid);
      if (!after || !p.before) return `${p.label}: CPU not readable`;
      const requests = apiRequests(p.origin);
      const us = (ms: number) => ((ms * 1000) / requests).toFixed(0);
      return (
        `${p.label} CPU per request (its ${requests / ROUNDS} cases together): ` +
        `${us(after.user + after.system - p.before.user - p.before.system)} µs ` +
        `(${us(after.user - p.before.user)} user + ${us(after.system - p.before.system)} system)`
      );
    });

    const rows = runs.map(({ name, samples }) => {
      const sorted = [...samples].sort((x, y) => x - y);
      return { name, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
    });
    const p50 = (name: string) => rows.find((r) => r.name === name)!.p50;
    const direct = p50('(a) direct to downstream');
    const bare = p50('(b) bare pass-through proxy');
    console.log(`\none connection per case, one request at a time, ${ROUNDS} rounds after ${WARMUP} warm-up rounds\n`);
    console.log('| case | p50 ms | p99 ms | p50 added over (a) | p50 added over (b) |');
    console.log('|---|---:|---:|---:|---:|');
    for (const r of rows) {
      const forwards = r.name.includes('POST /vault-forward') || r.name.startsWith('(b)');
      const over = (base: number) => (forwards ? (r.p50 - base).toFixed(3) : '');
      const overDirect = r.name.startsWith('(a)') ? '' : (r.p50 - direct).toFixed(3);
      console.log(`| ${r.name} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} | ${overDirect} | ${over(bare)} |`);
    }
    console.log(`\n${cpuLines.join('\n')}`);
    // What each route costs its server alone: the round-robin above mixes them, so each case runs by itself here,
    // in blocks of ALONE_BLOCK requests taken in turn, so that a machine whose load drifts weighs on every case alike.
    const pidOf = new Map(apiCpu.map((p) => [p.origin, p.pid]));
    const alone: string[] = [];
    const aloneUs = new Map<string, number>();
    const spentMs = new Map<string, number>();
    for (let done = 0; done < ROUTE_CPU_REQUESTS; done += ALONE_BLOCK) {
      const block = Math.min(ALONE_BLOCK, ROUTE_CPU_REQUESTS - done);
      for (const run of runs) {
        const pid = pidOf.get(run.origin);
        const before = cpuMs(pid);
        if (!before) continue;
        for (let k = 0; k < block; k++) await run.once(false);
        const after = cpuMs(pid);
        if (!after) continue;
        const ms = after.user + after.system - before.user - before.system;
        spentMs.set(run.name, (spentMs.get(run.name) ?? 0) + ms);
      }
    }
    for (const run of runs) {
      const ms = spentMs.get(run.name);
      if (ms === undefined) continue;
      const us = (ms * 1000) / ROUTE_CPU_REQUESTS;
      alone.push(`| ${run.name} | ${us.toFixed(0)} |`);
      aloneUs.set(run.name, us);
    }
    console.log(
      `\n| case, ${ROUTE_CPU_REQUESTS} requests alone | server CPU µs per request |\n|---|---:|\n${alone.join('\n')}`,
    );
    console.log(
      `\nThe cost table (decision 0157): one card, one connection, ${ROUNDS} rounds in the round-robin above`,
    );
    printGuaranteeTable(
      GUARANTEE_ROWS.map((row) => ({
        row,
        f: { p50Ms: p50(costCase(row)), apiCpuUs: aloneUs.get(costCase(row)) ?? NaN },
      })),
      'one connection',
    );
    const verdict = (added: number, target: number) =>
      `${added.toFixed(3)} ms p50 over a direct call (target ≤ ${target} ms: ${added <= target ? 'met' : 'NOT met'})`;
    const cardAdds = p50('POST /vault-forward, one card') - direct;
    const proxyAdds = bare - direct;
    console.log(
      `\ncard forward adds ${cardAdds.toFixed(3)} ms p50 over a direct call, ${(cardAdds / proxyAdds).toFixed(1)}× the ` +
        `bare proxy's ${proxyAdds.toFixed(3)} ms (target ≤ ${CARD_FORWARD_TARGET_TIMES_PROXY}×, issue 49: ` +
        `${cardAdds <= CARD_FORWARD_TARGET_TIMES_PROXY * proxyAdds ? 'met' : 'NOT met'})`,
    );
    console.log(`GET /health/live adds ${verdict(p50('GET /health/live (no auth)') - direct, LIVE_TARGET_MS)}`);
    console.log(
      `GET /buyers?limit=1 adds ${verdict(p50('GET /buyers?limit=1 (list)') - direct, LIST_OF_ONE_TARGET_MS)}`,
    );
    const floor = p50('(n) bare NestJS route on Fastify');
    console.log(
      `our pipeline beyond the framework: /health/live minus (n) ${(p50('GET /health/live (no auth)') - floor).toFixed(3)} ms; ` +
        `(n) minus (f), NestJS over Fastify: ${(floor - p50('(f) bare Fastify route')).toFixed(3)} ms`,
    );
    // POST /vault-forward is a plain Fastify route (decision 0041): what it skips is what a route through Nest
    // and our pipeline costs beyond a bare Fastify route. Issue 36 keeps that second request path only while
    // this saves more than 50 µs of CPU per forward.
    const live = aloneUs.get('GET /health/live (no auth)');
    const bareRoute = aloneUs.get('(f) bare Fastify route');
    if (live !== undefined && bareRoute !== undefined) {
      const saved = live - bareRoute;
      console.log(
        `the forward's own route skips the Nest pipeline: /health/live minus (f), alone, ${saved.toFixed(0)} µs ` +
          `of CPU per request (issue 36 keeps it while over ${FAST_PATH_KEPT_OVER_US} µs: ` +
          `${saved > FAST_PATH_KEPT_OVER_US ? 'kept' : 'serve the forward through Nest'})`,
      );
    }
    const framework = p50('GET /buyers/{unknown} (auth, 404)') - p50('GET /health/live (no auth)');
    console.log(`authentication + routing + the error path: ${framework.toFixed(3)} ms p50 (404 minus /health/live)`);
    if (traced) {
      const cost = (name: string) => (p50(`${name}, tracing on`) - p50(name)).toFixed(3);
      console.log(
        `tracing on adds ${cost('POST /vault-forward, one card')} ms p50 to a card forward, ` +
          `${cost('GET /buyers?limit=20 (list)')} ms to a list (loadavg ${loadavg()
            .map((l) => l.toFixed(2))
            .join(' ')})`,
      );
    }
    if (baseline) {
      const was = p50('[baseline] POST /vault-forward, one card') - direct;
      console.log(`[baseline] card forward adds ${was.toFixed(3)} ms p50 over a direct call`);
    }
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await database.drop();
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
