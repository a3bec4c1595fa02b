import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { envDetector, hostDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace';
import { BullMQOtel } from 'bullmq-otel';
import type { TelemetryConfig } from '../config/telemetry-config';
import { OwnTraceContextPropagator } from './propagation';
import { ScrubbingSpanProcessor } from './scrub';
import { setActiveTelemetry } from './telemetry';

/** Probes and scrapes: a span each every few seconds, and nothing to follow across processes. */
const UNTRACED_PATHS = /^\/(health(\/|$)|metrics$)/;

/**
 * The OpenTelemetry SDK of one process (decision 0109), loaded by start.ts only when tracing is on.
 * Spans: the HTTP server (every request, POST /vault-forward included, which Node's server answers
 * ahead of fastify; named by route template, route-spans.ts), undici (the downstream calls, callbacks,
 * token requestor), pg and ioredis (only inside a traced operation), and BullMQ's own producer/consumer
 * spans through bullmq-otel, whose job metadata carries the context from the API to the worker. What the
 * instrumentations could record of a request (headers, query strings, SQL parameters, Redis arguments)
 * is switched off at the source, and ScrubbingSpanProcessor scrubs every span again before export.
 */
export function startSdk(config: TelemetryConfig): void {
  const exporter =
    config.protocol === 'http/protobuf'
      ? new ProtobufTraceExporter({ url: config.tracesUrl })
      : new JsonTraceExporter({ url: config.tracesUrl });
  const sdk = new NodeSDK({
    serviceName: config.serviceName,
    // Not the process detector: its command line and arguments are not ours to export.
    resourceDetectors: [envDetector, hostDetector],
    resource: resourceFromAttributes({ 'service.version': packageVersion(), 'process.pid': process.pid }),
    // Not the default W3C trace context and baggage, nor OTEL_PROPAGATORS: a caller's context is not sent on.
    textMapPropagator: new OwnTraceContextPropagator(config.forwardPropagation),
    // Traces only: without these the SDK would also start metric and log exporters of its own to the same endpoint.
    metricReaders: [],
    logRecordProcessors: [],
    spanProcessors: [
      new ScrubbingSpanProcessor(new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.exportDelayMs })),
    ],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.test((request.url ?? '').split('?')[0]),
        // Outgoing calls go through undici; node:http's client is the exporter's own, which must not trace itself.
        disableOutgoingRequestInstrumentation: true,
        headersToSpanAttributes: { server: { requestHeaders: [], responseHeaders: [] } },
        // client.address from the socket: the instrumentation would take a caller's Forwarded or
        // X-Forwarded-For, which anyone can send; no proxy in front is trusted to set them (decision 0118).
        startIncomingSpanHook: (request) => ({ 'client.address': request.socket?.remoteAddress }),
        // Node's server answers the forward route ahead of fastify (no route for the instrumentation to read): named here.
        requestHook: (span, request) => {
          if (!('socket' in request) || !('url' in request) || request.method !== 'POST') return;
          if (request.url?.split('?')[0] !== '/vault-forward') return;
          span.updateName('POST /vault-forward');
          span.setAttribute('http.route', '/vault-forward');
        },
      }),
      new UndiciInstrumentation({ headersToSpanAttributes: { requestHeaders: [], responseHeaders: [] } }),
      new PgInstrumentation({
        // Never the bound values: the statement's text only, which has $1-style parameters.
        enhancedDatabaseReporting: false,
        addSqlCommenterCommentToQueries: false,
        requireParentSpan: true,
        ignoreConnectSpans: true,
      }),
      new IORedisInstrumentation({
        // The command's name only: its arguments are keys, job payloads and cached values.
        dbStatementSerializer: (command) => command,
        // BullMQ's blocking waits and the cache notices run outside any request: spans only inside one.
        requireParentSpan: true,
      }),
    ],
  });
  sdk.start();
  const bullmq = new BullMQOtel({ tracerName: 'vault-forward', version: packageVersion() });
  setActiveTelemetry({
    bullmq,
    capture: () => {
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      return carrier.traceparent ? JSON.stringify(carrier) : undefined;
    },
    within: (metadata, fn) =>
      metadata
        ? context.with(propagation.extract(ROOT_CONTEXT, JSON.parse(metadata) as Record<string, string>), fn)
        : fn(),
    nameServerRoute: (route) => {
      // The request's RPC metadata, which the http instrumentation put in the context of its server span
      // and reads back when the response closes (the standard way a framework hands it the route).
      const metadata = getRPCMetadata(context.active());
      if (metadata?.type === RPCType.HTTP) metadata.route = route;
    },
    shutdown: () => sdk.shutdown(),
  });
}

function packageVersion(): string {
  // dist/platform/telemetry and src/platform/telemetry are both two levels below the package root.
  return (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
}
