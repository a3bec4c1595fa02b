import { defineProblem } from '../../../platform/problem/problem';

/**
 * Problems found while sending a forward. They are problems of POST /vault-forward (ForwardingErrors spreads
 * them) and of a queued job's outcome; they live here because outbound/ imports neither forwarding/ nor
 * forward-records/. `invalidHeader`, `insecureTarget` and `targetAddressForbidden` are also raised by the planner, before sending.
 */
export const OutboundErrors = {
  invalidHeader: defineProblem({
    code: 'invalid-forward-header',
    status: 400,
    title: 'Missing or malformed forwarding header',
    description: 'An x-vault-forward-* header is missing or malformed; `errors` names it. Nothing was sent.',
  }),
  insecureTarget: defineProblem({
    code: 'insecure-target',
    status: 400,
    title: 'Target must use https',
    description:
      'Forwarding targets must be https URLs. Plain http is allowed only for hosts the operator lists in ' +
      'FORWARD_INSECURE_HOSTS. The same holds for every URL a forward calls (a token endpoint, a callback).',
  }),
  targetAddressForbidden: defineProblem({
    code: 'target-address-forbidden',
    status: 403,
    title: 'Target address not allowed',
    description:
      'The target host is, or resolves to, an address that is not public (loopback, private, link-local such as ' +
      '169.254.169.254, carrier-grade NAT, multicast, unspecified, or their IPv4-mapped IPv6 forms). Such ' +
      'targets, and token endpoints or callbacks there, are refused whatever the configs say.',
  }),
  downstreamUnreachable: defineProblem({
    code: 'downstream-unreachable',
    status: 502,
    title: 'Downstream unreachable',
    description:
      'The target could not be reached: name resolution, connection, TLS handshake or the connection itself failed.',
  }),
  downstreamTimeout: defineProblem({
    code: 'downstream-timeout',
    status: 504,
    title: 'Downstream timed out',
    description:
      'The target did not answer within the timeout (30 s unless x-vault-forward-timeout says otherwise, 1–120 s).',
  }),
  downstreamResponseTooLarge: defineProblem({
    code: 'downstream-response-too-large',
    status: 502,
    title: 'Downstream response too large',
    description: 'The target answered with a body larger than 10 MiB, which is not passed back.',
  }),
  tokenEndpointFailed: defineProblem({
    code: 'token-endpoint-failed',
    status: 502,
    title: 'Access token not obtained',
    description:
      'An oauth2-client-credentials method listed in x-vault-forward-authentications needed an access token, and its ' +
      'token endpoint could not be reached, or answered other than 2xx with a JSON object holding a Bearer ' +
      '`access_token`. The detail names the method and what went wrong (a status, never the endpoint’s answer). ' +
      'Nothing was sent to the target; retry, or check the method’s client credentials.',
  }),
  tokenEndpointTimeout: defineProblem({
    code: 'token-endpoint-timeout',
    status: 504,
    title: 'Token endpoint timed out',
    description:
      'An oauth2-client-credentials method needed an access token, and its token endpoint did not answer within 10 ' +
      's (or within the forward’s own x-vault-forward-timeout, when shorter). Nothing was sent to the target; retry.',
  }),
  capacityExceeded: defineProblem({
    code: 'forward-capacity-exceeded',
    status: 503,
    title: 'Forwarding capacity exceeded',
    description:
      'The bodies of the forwards in flight already take up the bytes this API process allows, in all or for ' +
      'this merchant account (FORWARD_MAX_INFLIGHT_BYTES, FORWARD_MAX_INFLIGHT_BYTES_PER_MERCHANT). Nothing was ' +
      'sent. Retry after the seconds the Retry-After header gives.',
  }),
};
