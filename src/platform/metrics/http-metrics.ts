import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram } from 'prom-client';
import { LATENCY_BUCKETS, Metrics, PREFIX } from './metrics.service';

/** The route of a request no route took (the router's 404, a path it could not read): one label for all. */
export const UNMATCHED_ROUTE = 'unmatched';

/** The route of every request of the Secure Fields origin (decision 0140), answered ahead of fastify. */
export const SECURE_FIELDS_ROUTE = 'secure-fields';

/** Methods by name; any other (WebDAV's, say, which Node parses) is "other", so the label stays a fixed set. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** By status / 100; index 0: no answer was written (the caller left first). */
const STATUS_CLASSES = ['none', '1xx', '2xx', '3xx', '4xx', '5xx'];

interface Children {
  requests: { inc(): void };
  seconds: { observe(value: number): void };
}

/**
 * The API's request metrics (decision 0150): a counter and a duration histogram by route template (fastify's
 * `/buyers/:buyer_id`, never the URL asked for, whose ids would make a series each), method and status class.
 * Built by the composition root for the API only; the worker serves no HTTP.
 */
export class HttpMetrics {
  private readonly requests: Counter<'route' | 'method' | 'status_class'>;
  private readonly seconds: Histogram<'route' | 'method' | 'status_class'>;
  /** Route → method → status class → the two series' children: one request looks up three keys, builds nothing. */
  private readonly children = new Map<string, Map<string, Array<Children | undefined>>>();

  constructor(metrics: Metrics) {
    const labelNames = ['route', 'method', 'status_class'] as const;
    this.requests = new Counter({
      name: `${PREFIX}http_requests_total`,
      help:
        'API requests answered, by route template (or "unmatched"), method and status class ("none": the caller ' +
        'left before the answer was written, counted on the forward route).',
      labelNames,
      registers: [metrics.registry],
    });
    this.seconds = new Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: 'API request duration, from the request read to the answer written, by route template, method, status class.',
      labelNames,
      buckets: LATENCY_BUCKETS,
      registers: [metrics.registry],
    });
  }

  /**
   * Counts every request fastify routes (Nest's routes, the OpenAPI document, the dashboard) once its answer
   * is written, timed by fastify itself (`elapsedTime`: no clock read of ours).
   */
  countRoutes(fastify: FastifyInstance): void {
    fastify.addHook('onResponse', (request, reply, done) => {
      this.observe(
        request.routeOptions.url ?? UNMATCHED_ROUTE,
        request.method,
        reply.statusCode,
        reply.elapsedTime / 1000,
      );
      done();
    });
  }

  /**
   * Counts a request answered outside fastify's routes (the forward route, served ahead of fastify; a path the
   * router refused) under `route`, when its connection is done with it.
   */
  countServed(req: IncomingMessage, res: ServerResponse, route: string): void {
    const started = performance.now();
    res.once('close', () =>
      this.observe(route, req.method, res.writableFinished ? res.statusCode : 0, (performance.now() - started) / 1000),
    );
  }

  private observe(route: string, method: string | undefined, status: number, seconds: number): void {
    const name = method !== undefined && METHODS.has(method) ? method : 'other';
    const statusClass = status >= 100 && status < 600 ? Math.floor(status / 100) : 0;
    let byMethod = this.children.get(route);
    if (!byMethod) this.children.set(route, (byMethod = new Map<string, Array<Children | undefined>>()));
    let byClass = byMethod.get(name);
    if (!byClass) byMethod.set(name, (byClass = []));
    let children = byClass[statusClass];
    if (!children) {
      const labels = { route, method: name, status_class: STATUS_CLASSES[statusClass] };
      children = byClass[statusClass] = {
        requests: this.requests.labels(labels),
        seconds: this.seconds.labels(labels),
      };
    }
    children.requests.inc();
    children.seconds.observe(seconds);
  }
}
