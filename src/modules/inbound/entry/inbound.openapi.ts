import { withProblems } from '../../../platform/openapi/api-problems';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { OutboundErrors } from '../../forwarding/sending/outbound.errors';
import { ForwardResponseErrors } from '../../forwarding/answers/forward-responses.errors';
import { InboundRouteErrors } from '../routes/inbound-routes.errors';
import { InboundErrors } from './inbound.errors';
import { INBOUND_ROUTE_TEMPLATE } from './inbound-target';

/**
 * /vault-inbound/{route_id}/{path}, written into the document by hand as POST /vault-forward is: InboundHttpHandler
 * serves it from Node's server, ahead of fastify. One operation, POST; a route takes the methods it lists, each
 * answered alike. `{path}` stands for the rest of the path, slashes included.
 */
export function inboundOperation(): { path: string; method: 'post'; operation: Record<string, unknown> } {
  const problems = withProblems({}, [
    CommonErrors.payloadTooLarge,
    CommonErrors.serviceUnavailable,
    CommonErrors.internalError,
    InboundRouteErrors.notFound,
    InboundErrors.methodNotAllowed,
    InboundErrors.pathNotRouted,
    InboundErrors.callerUnauthenticated,
    InboundErrors.rateLimited,
    InboundErrors.bodyUnreadable,
    InboundErrors.unsupportedCharset,
    InboundErrors.bodyUnparseable,
    InboundErrors.cardDataUnusable,
    InboundErrors.upstreamUnsigned,
    OutboundErrors.insecureTarget,
    OutboundErrors.targetAddressForbidden,
    OutboundErrors.downstreamUnreachable,
    OutboundErrors.downstreamTimeout,
    OutboundErrors.downstreamResponseTooLarge,
    OutboundErrors.capacityExceeded,
    ForwardResponseErrors.responseTooLargeForRules,
    ForwardResponseErrors.responseNotProcessable,
  ]);
  const ownError = {
    description: 'Always `true` on an error of this service, never on the upstream’s answer.',
    schema: { type: 'string', enum: ['true'] },
  };
  for (const response of Object.values<{ headers?: Record<string, unknown> }>(problems))
    response.headers = { 'x-vault-forward-error': ownError };
  const path = (name: string, description: string) => ({
    name,
    in: 'path',
    required: true,
    description,
    schema: { type: 'string' },
  });
  return {
    path: INBOUND_ROUTE_TEMPLATE,
    method: 'post',
    operation: {
      operationId: 'InboundRoutes_entry',
      tags: ['Inbound routes'],
      summary:
        'Send card data meant for a merchant: stored in the vault, sent on to the merchant with ids in its place',
      description:
        'For a merchant’s partners, not the merchant (decisions 0153–0156, 0158, docs/inbound-routes.md). No token: ' +
        'the caller proves itself as the route’s caller_authentication says (a secret header, an HMAC or Standard ' +
        'Webhooks signature, a client certificate, or nothing under a rate limit), before the body is read. The ' +
        'body (JSON, XML, a form, or any text; up to the route’s max_body_bytes, compressed or not) has each card ' +
        'number stored as a payment method of the merchant and replaced by its id where it was written, and each ' +
        'security code held in a checkout session of its own (an hour, used once) replaced by its id; all or none: ' +
        'a refused request stores nothing. The request then goes to the route’s upstream_url plus the path, with ' +
        'the route’s upstream_headers, signed with the merchant’s webhook secret (webhook-id, webhook-timestamp, ' +
        'webhook-signature), and its answer comes back, card numbers masked. Any method the route lists is served ' +
        'alike. Errors made by this service carry x-vault-forward-error: true.',
      security: [],
      parameters: [
        path('route_id', 'The inbound route’s id.'),
        path('path', 'The rest of the path (slashes included), under one of the route’s path_prefixes.'),
      ],
      requestBody: {
        required: false,
        description: 'Card data in the clear, as the partner has it.',
        content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
      },
      responses: {
        ...problems,
        '200': {
          description:
            'The upstream’s answer when it is 200 (any other status passes the same way, see `default`), card numbers masked.',
          headers: {
            'x-vault-inbound-request-id': { description: 'The request’s record.', schema: { type: 'string' } },
          },
          content: {
            'application/json': { schema: { description: 'The upstream’s JSON body, whatever it is.' } },
            '*/*': { schema: { type: 'string', format: 'binary' } },
          },
        },
        default: {
          description:
            'The upstream’s own answer (status, headers, body), card numbers masked, with x-vault-inbound-request-id.',
          headers: {
            'x-vault-inbound-request-id': { description: 'The request’s record.', schema: { type: 'string' } },
          },
          content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
        },
      },
    },
  };
}
