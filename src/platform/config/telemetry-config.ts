import { ConfigError, Env, integer, optional, parsedUrl } from './env';

/** What trace context the service's outgoing HTTP calls carry (decision 0118). */
export const FORWARD_TRACE_PROPAGATIONS = ['ours', 'none'] as const;
export type ForwardTracePropagation = (typeof FORWARD_TRACE_PROPAGATIONS)[number];

/** Which entry point a process is: its default OTEL_SERVICE_NAME. */
export type TelemetryRole = 'api' | 'worker';

/**
 * OpenTelemetry tracing (decision 0109): off unless OTEL_EXPORTER_OTLP_ENDPOINT (or the traces-only
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Read by the entry points before anything else loads
 * (src/platform/telemetry/start.ts) and again by loadConfig, so a bad value stops the process in one line.
 */
export interface TelemetryConfig {
  /** Where spans are POSTed (OTLP/HTTP, JSON): the traces endpoint, or the base endpoint + /v1/traces. */
  tracesUrl: string;
  serviceName: string;
  /** OTEL_EXPORTER_OTLP_PROTOCOL: http/json (ours by default) or http/protobuf; not gRPC. */
  protocol: 'http/json' | 'http/protobuf';
  /** The batch processor's delay between exports (OTEL_BSP_SCHEDULE_DELAY, ms). */
  exportDelayMs: number;
  /**
   * FORWARD_TRACE_PROPAGATION: `ours` (a traceparent of our own client span) or `none` on the requests
   * to downstreams, callback URLs and the token requestor. Never the caller's tracestate or baggage.
   */
  forwardPropagation: ForwardTracePropagation;
}

export function telemetryConfig(env: Env, role: TelemetryRole): TelemetryConfig | null {
  // Checked with tracing off too: a typo must not wait for the day tracing is turned on.
  const forwardPropagation = (optional(env, 'FORWARD_TRACE_PROPAGATION') ?? 'ours') as ForwardTracePropagation;
  if (!FORWARD_TRACE_PROPAGATIONS.includes(forwardPropagation))
    throw new ConfigError(
      'FORWARD_TRACE_PROPAGATION',
      `must be ${FORWARD_TRACE_PROPAGATIONS.join(' or ')}, got "${forwardPropagation.slice(0, 20)}"`,
    );
  const base = endpoint(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const traces = endpoint(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (!base && !traces) return null;
  const serviceName = optional(env, 'OTEL_SERVICE_NAME') ?? `vault-forward-${role}`;
  if (!/^[A-Za-z0-9._/-]{1,100}$/.test(serviceName))
    throw new ConfigError('OTEL_SERVICE_NAME', 'must be 1–100 letters, digits, ., _, / or -');
  const protocolName = optional(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL')
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = optional(env, protocolName) ?? 'http/json';
  if (protocol !== 'http/json' && protocol !== 'http/protobuf')
    throw new ConfigError(
      protocolName,
      `must be http/json or http/protobuf (OTLP/HTTP), got "${protocol.slice(0, 40)}"`,
    );
  return {
    // As the OTLP exporters read them: the signal's endpoint as is, the base one with the signal's path.
    tracesUrl: traces ?? `${base!.replace(/\/+$/, '')}/v1/traces`,
    serviceName,
    protocol,
    exportDelayMs: integer(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000, 10, 600_000),
    forwardPropagation,
  };
}

function endpoint(env: Env, name: string): string | undefined {
  // OTLP over HTTP only; headers, not the URL, carry a collector's credentials.
  return parsedUrl(env, name, ['http:', 'https:'], 'use OTEL_EXPORTER_OTLP_HEADERS') ? optional(env, name) : undefined;
}
