import { addressKind, literalBlockReason } from './addresses';
import { hostKey, isInsecureHost } from './http-methods';

/**
 * The outbound policy: whether this process may call a URL that a config leads to (a target, a callback,
 * a token endpoint an authentication method asks, a webhook), and how. Every such caller asks it, when
 * the URL is saved and again when it is dialled (FORWARD_INSECURE_HOSTS may differ by then, or between
 * processes). A host the operator lists in FORWARD_INSECURE_HOSTS is trusted (http allowed, no address
 * guard); any other must be https, and an IP literal must be a public address. Names are judged when
 * they resolve: an untrusted URL is dialled only through the guarded dispatchers (guardedLookup).
 */
type Transport =
  { trusted: boolean; refused?: undefined } | { refused: 'insecure' } | { refused: 'address'; reason: string };

export function transportOf(insecureHosts: ReadonlySet<string>, url: URL): Transport {
  if (isInsecureHost(insecureHosts, hostKey(url))) return { trusted: true };
  if (url.protocol !== 'https:') return { refused: 'insecure' };
  const reason = literalBlockReason(url.hostname);
  return reason ? { refused: 'address', reason } : { trusted: false };
}

/** Why the policy refuses a URL, as a sentence's end that names no value ("… is <this>"), or null. */
export function refusalOf(transport: Transport): string | null {
  if (transport.refused === 'insecure')
    return 'not https, which is refused unless the operator lists the host in FORWARD_INSECURE_HOSTS';
  if (transport.refused === 'address')
    return `${addressKind(transport.reason)}, which is never called unless the operator lists it in FORWARD_INSECURE_HOSTS`;
  return null;
}
