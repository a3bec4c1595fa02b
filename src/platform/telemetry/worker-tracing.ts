import { startTelemetry } from './start';

// Imported first by src/worker.ts: tracing (when OTEL_EXPORTER_OTLP_ENDPOINT is set) before anything it instruments loads.
startTelemetry('worker');
