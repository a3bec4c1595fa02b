import { defineProblem } from '../../../platform/problem/problem';

/** Problems of /vault-inbound/{route_id}/…: each says nothing was sent on to the upstream. */
export const InboundErrors = {
  methodNotAllowed: defineProblem({
    code: 'inbound-method-not-allowed',
    status: 405,
    title: 'Method not taken by this inbound route',
    description:
      'The route takes only the methods it lists (`methods`); the Allow header names them. Nothing was read.',
  }),
  pathNotRouted: defineProblem({
    code: 'inbound-path-not-routed',
    status: 404,
    title: 'Path not taken by this inbound route',
    description:
      'The path after /vault-inbound/{route_id} is under none of the route’s `path_prefixes`, or holds a `.` or `..` ' +
      'segment. Nothing was read.',
  }),
  callerUnauthenticated: defineProblem({
    code: 'inbound-caller-unauthenticated',
    status: 401,
    title: 'Caller not authenticated',
    description:
      'The caller did not prove itself as the route’s caller_authentication asks: a missing or wrong secret, a ' +
      'missing, stale or wrong signature, or no client certificate issued by the route’s certificate authorities. ' +
      'Nothing was stored or sent; a secret or certificate is refused before the body is read.',
  }),
  rateLimited: defineProblem({
    code: 'inbound-rate-limited',
    status: 429,
    title: 'Inbound route’s rate limit reached',
    description:
      'A route whose callers do not authenticate (kind `none`) takes at most `rate_limit.requests` requests per ' +
      '`rate_limit.per_seconds`; retry after the seconds Retry-After gives. Nothing was read.',
  }),
  bodyUnreadable: defineProblem({
    code: 'inbound-body-unreadable',
    status: 400,
    title: 'Inbound body not decodable',
    description:
      'The body does not decode: its content-encoding (gzip, deflate, br, zstd) fails or passes the route’s ' +
      '`max_body_bytes` decoded, or its bytes are not text in its charset. Nothing was stored or sent.',
  }),
  unsupportedCharset: defineProblem({
    code: 'inbound-unsupported-charset',
    status: 415,
    title: 'Charset not taken',
    description:
      'JSON, XML and form bodies are read as UTF-8 (US-ASCII is UTF-8); another charset, or an XML declaration naming ' +
      'one, is refused. Nothing was stored or sent.',
  }),
  bodyUnparseable: defineProblem({
    code: 'inbound-body-unparseable',
    status: 400,
    title: 'Inbound body does not parse',
    description:
      'The body is not what its content type says (JSON, XML or a form); the detail says where. Nothing was stored ' +
      'or sent.',
  }),
  cardDataUnusable: defineProblem({
    code: 'inbound-card-data-unusable',
    status: 422,
    title: 'Card data cannot be taken as sent',
    description:
      'Card data the request holds cannot be stored: a new card without an expiry, an expiry, holder name or ' +
      'security code that is not one, a security code with no card beside it, a field the route maps as a card ' +
      'number holding none, or a card number in the path, the query or a header (cards go in the body). The ' +
      '`errors` name the field, never its value. Nothing was sent.',
  }),
  upstreamUnsigned: defineProblem({
    code: 'inbound-upstream-unsigned',
    status: 409,
    title: 'No webhook secret to sign with',
    description:
      'The route’s merchant account has no webhook signing secret (POST /vault-forward/webhook-secrets): requests ' +
      'to its upstream are signed with it (Standard Webhooks). Nothing was sent.',
  }),
};
