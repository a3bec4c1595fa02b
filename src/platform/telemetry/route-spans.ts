import type { FastifyInstance } from 'fastify';
import { activeTelemetry } from './telemetry';

/**
 * With tracing on, names every fastify route's server span by method and route template
 * (`GET /buyers/:id`, OpenTelemetry's HTTP span name, with `http.route`): never by its URL, whose ids
 * and query strings are high-cardinality and may be sensitive. A request that matches no route (a
 * 404) keeps the method-only name. With tracing off no hook is added: nothing runs per request.
 */
export function nameSpansByRoute(fastify: FastifyInstance): void {
  const telemetry = activeTelemetry();
  if (!telemetry) return;
  // onRequest, the first hook after routing: a request refused later (415, 413, 401) is named too.
  fastify.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    if (route !== undefined) telemetry.nameServerRoute(route);
    done();
  });
}
