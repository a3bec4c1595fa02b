import type { Attributes, AttributeValue, Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace';
import { maskCardNumbers } from '../card-data/card-numbers';

export const REDACTED = '[redacted]';

/** Attributes that are only ever a query string, a header or a body: dropped whatever they hold. */
const DROPPED = /^(url\.query|http\.(request|response)\.header\..*|http\.request\.body.*|http\.response\.body.*)$/;

/** Names whose value is a secret or card data, whatever it looks like (a CVV is three digits). */
const SECRET_NAME =
  /(authorization|cookie|secret|passw(or)?d|token|api[-_.]?key|credential|card|\bpan\b|cvv|cvc|security[-_.]?code|expir)/i;

/**
 * Values that are bearer tokens, JWTs (ours, a downstream's) and webhook secrets, wherever they appear
 * in a value; card numbers are masked by the one detector (card-data/).
 */
const SECRET_VALUES = [/\beyJ[\w-]{2,}\.[\w-]{2,}\.[\w-]*/g, /\b(bearer|basic)\s+[\w.~+/=-]+/gi, /\bwhsec_[\w+/=]+/g];

/** A URL or a path (a word with a slash) followed by a query string or fragment: those go. */
const WITH_QUERY = /([^\s?#]*\/[^\s?#]*)[?#]\S*/g;

/** The value with card numbers, tokens, secrets and query strings replaced. */
export function scrubValue(value: string): string {
  let scrubbed = value.replace(WITH_QUERY, '$1');
  for (const pattern of SECRET_VALUES) scrubbed = scrubbed.replace(pattern, REDACTED);
  // user:password@ in a URL (a connection string).
  return maskCardNumbers(scrubbed.replace(/(:\/\/)[^\s/@]+@/g, `$1${REDACTED}@`));
}

export function scrubAttributes(attributes: Attributes): Attributes {
  const out: Attributes = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (DROPPED.test(name)) continue;
    out[name] = SECRET_NAME.test(name) && value !== undefined ? REDACTED : scrubAttribute(value);
  }
  return out;
}

function scrubAttribute(value: AttributeValue): AttributeValue {
  if (typeof value === 'string') return scrubValue(value);
  if (Array.isArray(value)) return (value as unknown[]).map((v) => (typeof v === 'string' ? scrubValue(v) : v));
  return value;
}

/**
 * The backstop behind the instrumentations' own settings (sdk.ts): every span, before it is exported,
 * has its name, attributes, events and status message scrubbed (scrubAttributes). The span handed on
 * is a view of the ended one with those fields replaced; the SDK's span itself is not changed.
 */
export class ScrubbingSpanProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    this.next.onEnd(scrubbedSpan(span));
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

export function scrubbedSpan(span: ReadableSpan): ReadableSpan {
  return Object.create(span, {
    name: { value: scrubValue(span.name) },
    attributes: { value: scrubAttributes(span.attributes) },
    events: {
      value: span.events.map((event) => ({
        ...event,
        attributes: event.attributes && scrubAttributes(event.attributes),
      })),
    },
    status: { value: { ...span.status, message: span.status.message && scrubValue(span.status.message) } },
  }) as ReadableSpan;
}
