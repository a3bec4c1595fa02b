import { defineProblem } from '../../../platform/problem/problem';

export const InboundRouteErrors = {
  notFound: defineProblem({
    code: 'inbound-route-not-found',
    status: 404,
    title: 'Inbound route not found',
    description:
      'No inbound route with this id exists in the merchant account of the request (on /vault-forward/inbound-routes), ' +
      'or at all (on /vault-inbound/{route_id}/…, which names no merchant account).',
  }),
  mutualTlsUnavailable: defineProblem({
    code: 'inbound-mutual-tls-unavailable',
    status: 422,
    title: 'Mutual TLS is not available on this API',
    description:
      'The API listens on plain HTTP behind a TLS terminator, and this one passes on no client certificate ' +
      '(the operator sets INBOUND_CLIENT_CERT_HEADER when it does, decision 0154). An inbound route whose callers ' +
      'authenticate with `mutual-tls` cannot be created or called until then; use `hmac` or `shared-secret`.',
  }),
};
