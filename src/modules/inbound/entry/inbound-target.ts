import { ProblemException } from '../../../platform/problem/problem';
import { InboundErrors } from './inbound.errors';

/** Where callers send requests: `/vault-inbound/{route_id}`, then a path under one of the route's prefixes. */
const INBOUND_ROUTE = '/vault-inbound';
/** The entry as the request metrics and the API description name it. */
export const INBOUND_ROUTE_TEMPLATE = `${INBOUND_ROUTE}/{route_id}/{path}`;

/** What a request target names: the route, the path after it (percent-encoded as sent) and the query. */
export interface InboundTarget {
  routeId: string;
  /** `/` at least; as the caller spelt it (the upstream gets it so). */
  path: string;
  /** With its `?`, or empty. */
  query: string;
}

/** Whether a request target is an inbound route's (its own entry, ahead of fastify). */
export function isInboundPath(url: string): boolean {
  return url.startsWith(`${INBOUND_ROUTE}/`);
}

/** The route id, path and query of a request target of isInboundPath; null when it names no route id. */
export function inboundTarget(url: string): InboundTarget | null {
  const queryAt = url.search(/[?#]/);
  const pathname = queryAt < 0 ? url : url.slice(0, queryAt);
  const query = queryAt < 0 || url[queryAt] === '#' ? '' : url.slice(queryAt).split('#')[0];
  const rest = pathname.slice(INBOUND_ROUTE.length + 1);
  const slash = rest.indexOf('/');
  const routeId = slash < 0 ? rest : rest.slice(0, slash);
  if (routeId === '') return null;
  return { routeId, path: slash < 0 ? '/' : rest.slice(slash), query };
}

/**
 * Refuses a path with a dot segment, spelt or percent-encoded (the upstream's URL resolution would climb out of
 * its path), or under none of the route's prefixes: a prefix takes itself and what lies below it.
 */
export function checkRoutedPath(path: string, prefixes: readonly string[]): void {
  const segments = path.split('/').map((segment) => segment.replace(/%2e/gi, '.'));
  const dotted = segments.some((segment) => segment === '.' || segment === '..');
  const under = prefixes.some(
    (prefix) => prefix === '/' || path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`),
  );
  if (dotted || !under)
    throw new ProblemException(
      InboundErrors.pathNotRouted,
      dotted ? 'The path holds a dot segment.' : 'The path is under none of the route’s path_prefixes.',
      [{ location: 'path', name: 'path', message: dotted ? 'holds a . or .. segment' : 'under no path prefix' }],
    );
}

/** The upstream's URL for a request: the route's upstream_url with the request's path added and its query. */
export function upstreamUrlOf(upstreamUrl: string, target: InboundTarget): URL {
  const base = new URL(upstreamUrl);
  const basePath = base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname;
  return new URL(
    `${base.origin}${basePath}${target.path === '/' && basePath !== '' ? '' : target.path}${target.query}`,
  );
}
