/**
 * The cost table of bench:forward and bench:latency (issue 49, decision 0157): a card forward with every
 * guarantee on, then with each switched off on its own, then with all of them off, so what each costs in CPU
 * per forward and in added p50 is a difference of two measured rows.
 *
 * How each is switched off, honestly and never in a production default:
 *   durable record  MEASURE_WITHOUT=durable-record (the card is sent without waiting for the disclosure's
 *                   commit; the record goes in with its outcome, batched)
 *   ledger          LEDGER_ENABLED=false
 *   budgets         MEASURE_WITHOUT=budgets (no disclosure counted)
 *   bodies          the config's record_bodies off (on in "all on")
 *   response rules  the config without its three rules and unmatched_pan mask
 *   tracing         OTEL_EXPORTER_OTLP_ENDPOINT unset (set in "all on", to a sink that answers 200)
 * The first three and tracing are settings of the API process, so each row has an API of its own; bodies
 * and rules are a config's, so their rows share the "all on" API and name a target host whose config differs.
 */
import type { ChildProcess } from 'node:child_process';
import { startApi } from './bench-api';
import { forkServer, postJson } from './support';

const GUARANTEES = ['durable record', 'ledger', 'budgets', 'bodies', 'response rules', 'tracing'] as const;
type Guarantee = (typeof GUARANTEES)[number];

export interface GuaranteeRow {
  label: string;
  off: ReadonlySet<Guarantee>;
}

/** All on, each off on its own, all off. */
export const GUARANTEE_ROWS: GuaranteeRow[] = [
  { label: 'all guarantees on', off: new Set() },
  ...GUARANTEES.map((g) => ({ label: `without ${g}`, off: new Set([g]) })),
  { label: 'all guarantees off', off: new Set(GUARANTEES) },
];

/** The three JSON-path rules and unmatched_pan of the "response rules" guarantee (bench:forward's (c+rules) of old). */
const RESPONSE_RULES = {
  response_rules: [
    { match: '$.received', action: 'mask' },
    { match: '$.ok', action: 'remove' },
    { match: '$.card.number', action: 'mask' },
  ],
  unmatched_pan: 'mask',
};

/** The process settings of a row; rows with the same settings share one API process. */
function processSettings(off: ReadonlySet<Guarantee>, sink: string): Record<string, string> {
  const without = [off.has('durable record') && 'durable-record', off.has('budgets') && 'budgets'].filter(Boolean);
  return {
    ...(without.length > 0 ? { MEASURE_WITHOUT: without.join(',') } : {}),
    ...(off.has('ledger') ? { LEDGER_ENABLED: 'false' } : {}),
    ...(off.has('tracing') ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: sink }),
  };
}

const configKey = (off: ReadonlySet<Guarantee>) =>
  `${off.has('bodies') ? '' : 'bodies'}+${off.has('response rules') ? '' : 'rules'}`;

/** What the table needs running: an API per process setting, a target (and its config) per config setting. */
export interface GuaranteeSetup {
  /** Each row's API (url and process) and the target URL its forwards go to. */
  rows: Array<GuaranteeRow & { api: string; process: ChildProcess; target: string }>;
}

/**
 * Starts what the rows need beside `env` (the bench's own API settings, one database): a span sink, one echo
 * target per config setting with the merchant's config for it (created through `setupApi` with `token`), and one
 * API per process setting. `targetPath` is the path the forwards post to.
 */
export async function startGuarantees(
  env: Record<string, string>,
  setupApi: string,
  token: string,
  options: { flags?: string[]; targetPath?: string } = {},
): Promise<GuaranteeSetup> {
  const sink = `http://127.0.0.1:${(await forkServer('echo-server.js')).port}`;
  const targets = new Map<string, string>();
  for (const row of GUARANTEE_ROWS) {
    const key = configKey(row.off);
    if (targets.has(key)) continue;
    const echo = await forkServer('echo-server.js');
    await postJson(`${setupApi}/vault-forward/configs`, token, {
      display_name: `Cost table ${key}`,
      hosts: [`127.0.0.1:${echo.port}`],
      record_bodies: !row.off.has('bodies'),
      ...(row.off.has('response rules') ? {} : RESPONSE_RULES),
    });
    targets.set(key, `http://127.0.0.1:${echo.port}${options.targetPath ?? '/charge'}`);
  }
  const apis = new Map<string, { url: string; process: ChildProcess }>();
  const rows: GuaranteeSetup['rows'] = [];
  for (const row of GUARANTEE_ROWS) {
    const settings = processSettings(row.off, sink);
    const key = JSON.stringify(settings);
    let api = apis.get(key);
    if (!api) {
      api = await startApi({ ...env, ...settings }, { flags: options.flags });
      apis.set(key, api);
    }
    rows.push({ ...row, api: api.url, process: api.process, target: targets.get(configKey(row.off))! });
  }
  return { rows };
}

/** One row's measured figures: what a forward costs the API in CPU, and its p50 (one connection, or under load). */
export interface GuaranteeFigures {
  p50Ms: number;
  apiCpuUs: number;
  /** The run's database's backends, where measured. */
  postgresCpuUs?: number;
  /** Forwards per second, under load only. */
  rps?: number;
}

/**
 * The table: each row, and what its guarantee costs (the "all on" row minus it; for "all off", all of them),
 * in p50 and in CPU per forward. `p50Label` says whose p50 it is.
 */
export function printGuaranteeTable(figures: Array<{ row: GuaranteeRow; f: GuaranteeFigures }>, p50Label: string) {
  const all = figures.find((x) => x.row.off.size === 0)!.f;
  const withRps = figures.some((x) => x.f.rps !== undefined);
  const withPostgres = figures.some((x) => x.f.postgresCpuUs !== undefined);
  const head = [
    'guarantees',
    ...(withRps ? ['forwards/s'] : []),
    `${p50Label} p50 ms`,
    'p50 cost ms',
    'API CPU µs/forward',
    'API CPU cost µs',
    ...(withPostgres ? ['PostgreSQL CPU µs/forward', 'PostgreSQL CPU cost µs'] : []),
  ];
  console.log(
    `\n| ${head.join(' | ')} |\n|---|${head
      .slice(1)
      .map(() => '---:')
      .join('|')}|`,
  );
  for (const { row, f } of figures) {
    const cost = (a: number | undefined, b: number | undefined, digits: number) =>
      row.off.size === 0 || a === undefined || b === undefined ? '' : (a - b).toFixed(digits);
    const cells = [
      row.label,
      ...(withRps ? [f.rps?.toFixed(0) ?? ''] : []),
      f.p50Ms.toFixed(3),
      cost(all.p50Ms, f.p50Ms, 3),
      f.apiCpuUs.toFixed(0),
      cost(all.apiCpuUs, f.apiCpuUs, 0),
      ...(withPostgres ? [f.postgresCpuUs?.toFixed(0) ?? '', cost(all.postgresCpuUs, f.postgresCpuUs, 0)] : []),
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
  console.log(
    "(cost: the 'all guarantees on' row minus the row: what that guarantee costs a forward; for 'all off', all of them)",
  );
}
