/** The forward route; the body parsers and the problem filter treat it specially. */
export const FORWARD_ROUTE = '/vault-forward';

/**
 * Whether a request target names the forward route, exactly as fastify's router would read it: the
 * path ends at `?` or `#`, and is compared after `decodeURI` (find-my-way's decoding), so
 * `/vault%2Dforward` is the route (RFC 3986 §6.2.2.2: an encoded unreserved character is that
 * character) while `/vault-forward/`, `//vault-forward` or `/Vault-Forward` are not, there as here.
 * Answering an encoded spelling with the forward handler keeps one meaning per path: no Nest route
 * serves POST /vault-forward (forward.openapi.ts documents it), so a spelling that slipped past would
 * be a 404 route-not-found.
 */
export function isForwardPath(url: string): boolean {
  // The plain spelling, which is every real caller's, costs one comparison.
  if (url.startsWith(FORWARD_ROUTE) && (url.length === FORWARD_ROUTE.length || url[FORWARD_ROUTE.length] === '?'))
    return true;
  let end = url.length;
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 0x3f || c === 0x23) {
      end = i;
      break;
    }
  }
  const path = url.slice(0, end);
  if (!path.includes('%')) return path === FORWARD_ROUTE;
  // Each %XX stands for one character or less: longer paths cannot decode to the route.
  if (path.length > FORWARD_ROUTE.length * 3) return false;
  try {
    return decodeURI(path) === FORWARD_ROUTE;
  } catch {
    return false;
  }
}
