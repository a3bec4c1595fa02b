import { literalBlockReason } from './addresses';
import { hostKey, isInsecureHost } from './http-methods';

/**
 * How a URL may be reached, by the transport rules every outgoing request of a forward follows (its
 * target, and a token endpoint an authentication method asks): a host the operator lists in
 * FORWARD_INSECURE_HOSTS is trusted (http allowed, no address guard); any other must be https, and an IP
 * literal must be a public address (names are judged by the guard when they resolve).
 */
type Transport =
  { trusted: boolean; refused?: undefined } | { refused: 'insecure' } | { refused: 'address'; reason: string };

export function transportOf(insecureHosts: ReadonlySet<string>, url: URL): Transport {
  if (isInsecureHost(insecureHosts, hostKey(url))) return { trusted: true };
  if (url.protocol !== 'https:') return { refused: 'insecure' };
  const reason = literalBlockReason(url.hostname);
  return reason ? { refused: 'address', reason } : { trusted: false };
}
