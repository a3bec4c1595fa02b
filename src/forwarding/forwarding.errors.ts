import { defineProblem } from '../common/problem/problem';

/** Problems of POST /vault-forward; each response also carries `x-vault-forward-error: true`. */
export const ForwardingErrors = {
  invalidHeader: defineProblem({
    code: 'invalid-forward-header',
    status: 400,
    title: 'Missing or malformed forwarding header',
    description: 'An x-vault-forward-* header is missing or malformed; `errors` names it. Nothing was sent.',
  }),
  unknownHeader: defineProblem({
    code: 'unknown-forward-header',
    status: 400,
    title: 'Unknown or misspelled forwarding header',
    description:
      'A header looks like a forwarding header but is not one (for example x-valud-forward-authentications). It ' +
      'is refused rather than ignored, because the request would otherwise go out without what it names. Nothing ' +
      'was sent.',
  }),
  invalidPaymentMethodsHeader: defineProblem({
    code: 'invalid-payment-methods-header',
    status: 400,
    title: 'Malformed x-vault-forward-payment-methods',
    description:
      'The header must list 1 to 100 payment method UUIDs separated by commas, each at most once. Position X of ' +
      'the list fills the placeholders ending in _X.',
  }),
  unknownPaymentMethod: defineProblem({
    code: 'unknown-payment-method',
    status: 400,
    title: 'Payment method not found',
    description:
      'A payment method listed in x-vault-forward-payment-methods does not exist in the merchant account of the ' +
      'request (unknown, deleted, or another merchant’s). Nothing was sent.',
  }),
  unknownCheckoutSession: defineProblem({
    code: 'unknown-checkout-session',
    status: 400,
    title: 'Checkout session not found',
    description:
      'The checkout session named by x-vault-forward-checkout-session does not exist in the merchant account of ' +
      'the request (unknown, deleted, or another merchant’s). Nothing was sent.',
  }),
  invalidPlaceholder: defineProblem({
    code: 'invalid-placeholder',
    status: 400,
    title: 'Unknown placeholder',
    description:
      'The body or a forwarded header uses a placeholder whose name is unknown, whose position exceeds the ' +
      'listed cards, or that its source cannot fill (CARD_SECURITY_CODE_X without ' +
      'x-vault-forward-checkout-session). Nothing was sent. See docs/placeholders.md.',
  }),
  insecureTarget: defineProblem({
    code: 'insecure-target',
    status: 400,
    title: 'Target must use https',
    description:
      'Forwarding targets must be https URLs. Plain http is allowed only for hosts the operator lists in FORWARD_INSECURE_HOSTS.',
  }),
  endpointNotEnabled: defineProblem({
    code: 'endpoint-not-enabled',
    status: 403,
    title: 'Target not enabled',
    description:
      'No enabled forwarding config of this merchant account lists the target host (host:port when not 443) with ' +
      'this HTTP method. Add one with POST /vault-forward/configs.',
  }),
  targetAddressForbidden: defineProblem({
    code: 'target-address-forbidden',
    status: 403,
    title: 'Target address not allowed',
    description:
      'The target host is, or resolves to, an address that is not public (loopback, private, link-local such as ' +
      '169.254.169.254, carrier-grade NAT, multicast, unspecified, or their IPv4-mapped IPv6 forms). Such ' +
      'targets are refused whatever the configs say.',
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
  filledBodyTooLarge: defineProblem({
    code: 'filled-body-too-large',
    status: 413,
    title: 'Filled body too large',
    description:
      'With its placeholders filled, the body would be larger than the limit the detail names ' +
      '(FORWARD_MAX_FILLED_BODY_BYTES, 2 MiB unless the operator set another). Its size is computed before the ' +
      'body is built; nothing was sent.',
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
  recordNotFound: defineProblem({
    code: 'vault-forward-request-not-found',
    status: 404,
    title: 'Forward record not found',
    description: 'No forward with this request id exists in the merchant account of the request.',
  }),
};
