import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** Where the dashboard is served. Its routes are fastify's, not Nest's: public, and no API operations. */
export const DASHBOARD_PREFIX = '/dashboard';

/**
 * The dashboard is a static bundle that talks to the API with the caller's own token; nothing in it
 * may run that the bundle did not ship. Lit styles travel as constructed stylesheets, which
 * `style-src 'self'` allows; `connect-src 'self'` keeps tokens from being sent anywhere else.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

export const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': DASHBOARD_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/**
 * The built bundle (`vite build` writes dist/dashboard): next to the compiled server in dist/, or
 * from the sources (ts-jest runs src/) in the project's dist/.
 */
export function dashboardRoot(): string | null {
  const candidates = [resolve(__dirname, '..', 'dashboard'), resolve(__dirname, '..', '..', 'dist', 'dashboard')];
  return candidates.find((dir) => existsSync(join(dir, 'index.html'))) ?? null;
}

/**
 * Serves the bundle under /dashboard/ (and redirects /dashboard there). Hashed assets are immutable;
 * index.html is revalidated so a new build is picked up at once.
 */
export async function registerDashboard(fastify: FastifyInstance, root: string): Promise<void> {
  await fastify.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply) => {
      reply.headers(DASHBOARD_HEADERS);
    });
    // @fastify/static answers `..`, `.` and empty segments and dotfiles with a 403 of its own, which
    // the filter could only type as bad-request. A path that is not a plain one under the bundle
    // names no file of it: the same 404 route-not-found as any missing file, telling nothing more.
    scope.addHook('onRequest', async (request, reply) => {
      if (isPlainAssetPath(request.url)) return;
      reply.callNotFound();
      return reply;
    });
    // The plugin's own redirect covers sub-folders only; the bare prefix is ours.
    scope.get(DASHBOARD_PREFIX, async (_request, reply) => reply.redirect(`${DASHBOARD_PREFIX}/`, 301));
    await scope.register(fastifyStatic, {
      root,
      prefix: `${DASHBOARD_PREFIX}/`,
      // @nestjs/swagger registers the plugin too; only one registration may decorate the reply.
      decorateReply: false,
      index: ['index.html'],
      dotfiles: 'deny',
      setHeaders: (reply, path) => {
        reply.header(
          'cache-control',
          /[\\/]assets[\\/]/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache',
        );
      },
      cacheControl: false,
    });
  });
}

/**
 * Whether a /dashboard URL's path is a plain one: every segment after the prefix (decoded, since
 * `%2e%2e` is `..` to the file system) non-empty, not starting with a dot, without a backslash or
 * NUL; only the last may be empty (a folder's index).
 */
export function isPlainAssetPath(url: string): boolean {
  const path = url.split(/[?#]/, 1)[0];
  if (path === DASHBOARD_PREFIX) return true;
  const segments = path.slice(DASHBOARD_PREFIX.length + 1).split('/');
  return segments.every((raw, index) => {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return false;
    }
    if (segment === '') return index === segments.length - 1;
    return !segment.startsWith('.') && !/[\\/\0]/.test(segment);
  });
}
