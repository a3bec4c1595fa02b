import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One span as the OTLP/HTTP JSON exporter sends it, with its process's service.name. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  /** Every value of the span (attributes, events' attributes, status message) and of its resource, as text. */
  values: string[];
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number } & {
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
  bytesValue?: string;
};
type KeyValue = { key: string; value?: AnyValue };

function plain(value: AnyValue | undefined): unknown {
  if (!value) return undefined;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plain);
  if (value.kvlistValue) return attributesOf(value.kvlistValue.values);
  return value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue ?? value.bytesValue;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

/**
 * A local OTLP/HTTP receiver: POST /v1/traces with the JSON encoding (what @opentelemetry/exporter-trace-otlp-http
 * sends), decoded by hand into ReceivedSpan.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      // Anything but JSON on /v1/traces is what the last assertion of the test refuses.
      if (req.url !== '/v1/traces' || req.headers['content-type'] !== 'application/json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const message = JSON.parse(body.toString('utf8')) as {
        resourceSpans?: Array<{
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: Array<{
            spans?: Array<{
              traceId: string;
              spanId: string;
              parentSpanId?: string;
              name: string;
              kind: number;
              attributes?: KeyValue[];
              events?: Array<{ name: string; attributes?: KeyValue[] }>;
              status?: { message?: string };
            }>;
          }>;
        }>;
      };
      for (const resourceSpans of message.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? []) {
            const attributes = attributesOf(span.attributes);
            const values = [
              span.name,
              span.status?.message ?? '',
              ...Object.values(attributes).map((v) => JSON.stringify(v)),
              ...Object.values(resource).map((v) => JSON.stringify(v)),
              ...(span.events ?? []).flatMap((e) => [
                e.name,
                ...Object.values(attributesOf(e.attributes)).map((v) => JSON.stringify(v)),
              ]),
            ];
            spans.push({
              service: String(resource['service.name']),
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              attributes,
              values,
            });
          }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type OtlpReceiver = Awaited<ReturnType<typeof startOtlpReceiver>>;
