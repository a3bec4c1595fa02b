import { Context, SpanKind, TextMapGetter, TextMapPropagator, TextMapSetter, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ForwardTracePropagation } from '../config/telemetry-config';

/**
 * The one propagator of a process with tracing on (decision 0118), in place of the SDK's default (W3C
 * trace context and baggage). A caller's `traceparent` may parent our spans; its `tracestate` and
 * `baggage` are never read, so nothing of them can be written out again. What goes out (to a
 * downstream, a callback URL, a token requestor, and into a job's metadata) is a `traceparent` of our
 * own span and nothing else; with FORWARD_TRACE_PROPAGATION=none, outgoing HTTP calls get none at all.
 */
export class OwnTraceContextPropagator implements TextMapPropagator {
  private readonly w3c = new W3CTraceContextPropagator();

  constructor(private readonly outgoingHttp: ForwardTracePropagation) {}

  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    // A client span is an outgoing HTTP call (undici's): the pg and ioredis spans carry nothing out, and
    // BullMQ's job metadata is injected within its producer span, which keeps the queued trace whole.
    if (this.outgoingHttp === 'none' && spanKind(context) === SpanKind.CLIENT) return;
    const own = trace.getSpanContext(context);
    if (own) this.w3c.inject(trace.setSpanContext(context, { ...own, traceState: undefined }), carrier, setter);
  }

  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    const parent = trace.getSpanContext(this.w3c.extract(context, carrier, getter));
    return parent ? trace.setSpanContext(context, { ...parent, traceState: undefined }) : context;
  }

  fields(): string[] {
    return ['traceparent'];
  }
}

function spanKind(context: Context): SpanKind | undefined {
  // The SDK's spans expose their kind; a span context wrapped without one (a remote parent) has none.
  return (trace.getSpan(context) as { kind?: SpanKind } | undefined)?.kind;
}
