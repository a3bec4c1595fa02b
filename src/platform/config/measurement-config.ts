import { ConfigError, Env, optional } from './env';

/** The guarantees of a forward that a measurement may take away, one at a time (decision 0157). */
const MEASURED_GUARANTEES = ['durable-record', 'budgets'] as const;
export type MeasuredGuarantee = (typeof MEASURED_GUARANTEES)[number];

/**
 * MEASURE_WITHOUT: for benchmarks only (bench:forward and bench:latency's cost table, decision 0157), a
 * comma-separated list of guarantees this process leaves out of every forward, so that what each costs is a
 * measured number: `durable-record` sends without waiting for the disclosure's commit (the record still
 * goes in with its outcome), `budgets` counts no disclosure. The guarantees that have a setting of their own
 * (LEDGER_ENABLED, a config's record_bodies and response rules, OTEL_EXPORTER_OTLP_ENDPOINT) are measured
 * through it. Refused in production: no deployment runs without them.
 */
export function measureWithout(env: Env, nodeEnv: string): ReadonlySet<MeasuredGuarantee> {
  const raw = optional(env, 'MEASURE_WITHOUT');
  if (raw === undefined) return new Set();
  if (nodeEnv === 'production')
    throw new ConfigError('MEASURE_WITHOUT', 'is for benchmarks only and is refused in production');
  const names = raw
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  for (const name of names)
    if (!(MEASURED_GUARANTEES as readonly string[]).includes(name))
      throw new ConfigError(
        'MEASURE_WITHOUT',
        `"${name.slice(0, 30)}" is not one of ${MEASURED_GUARANTEES.join(', ')}`,
      );
  return new Set(names as MeasuredGuarantee[]);
}
