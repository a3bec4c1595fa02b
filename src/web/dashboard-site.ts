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
