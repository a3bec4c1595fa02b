/**
 * The tracing of this process once src/platform/telemetry/sdk.ts has started it, or null (the default: no
 * OTEL_EXPORTER_OTLP_ENDPOINT). Nothing of OpenTelemetry is imported here, so code that asks (the
 * job queue, the shutdown) loads no SDK when tracing is off (decision 0109).
 */
export interface ActiveTelemetry {
  /** BullMQ's `telemetry` option for every queue and worker (a bullmq-otel BullMQOtel). */
  readonly bullmq: unknown;
  /**
   * The active trace context as BullMQ's job metadata (W3C traceparent, JSON), taken when a job is
   * asked for, so that a job enqueued later in someone else's batch still joins its own request's trace.
   */
  capture(): string | undefined;
  /** Runs `fn` with the context that `capture` took as the active one (no-op without one). */
  within<T>(metadata: string | undefined, fn: () => T): T;
  /**
   * Gives the HTTP server span of the request being handled its route template (`/buyers/:id`): the
   * http instrumentation names the span `{METHOD} {route}` and sets `http.route` when it ends.
   */
  nameServerRoute(route: string): void;
  /** Exports what is buffered and stops (on SIGTERM, before the process exits). */
  shutdown(): Promise<void>;
}

let active: ActiveTelemetry | null = null;

export function activeTelemetry(): ActiveTelemetry | null {
  return active;
}

export function setActiveTelemetry(telemetry: ActiveTelemetry | null): void {
  active = telemetry;
}
