export const FORWARD_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type ForwardMethod = (typeof FORWARD_METHODS)[number];
export const DEFAULT_CONFIG_METHODS: ForwardMethod[] = ['POST', 'PUT', 'PATCH'];

/**
 * The allow-list key of a target: lower-case host, plus `:port` unless the port is 443 — the form
 * merchants write in a config's `hosts`.
 */
export function hostKey(url: URL): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return port === '443' ? url.hostname.toLowerCase() : `${url.hostname.toLowerCase()}:${port}`;
}

/**
 * Whether a host key (see hostKey) is listed in FORWARD_INSECURE_HOSTS: either exactly, or by its bare
 * host name, which then covers every port.
 */
export function isInsecureHost(insecureHosts: ReadonlySet<string>, key: string): boolean {
  return insecureHosts.has(key) || insecureHosts.has(key.replace(/:\d+$/, ''));
}

/**
 * Whether a config's `hosts` enable a target URL: by its host key (any scheme the transport rules
 * allow, as configs have always listed hosts) or by its origin (`https://host[:port]`, as Gr4vy's
 * definitions list them: that scheme and port only).
 */
export function hostsEnable(hosts: ReadonlySet<string>, url: URL): boolean {
  return hosts.has(hostKey(url)) || hosts.has(url.origin);
}
