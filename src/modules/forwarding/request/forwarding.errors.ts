import { defineProblem } from '../../../platform/problem/problem';
import { OutboundErrors } from '../sending/outbound.errors';
import { ForwardResponseErrors } from '../answers/forward-responses.errors';
import { TokenRequestorErrors } from '../../payments/network-tokens/token-requestor';

/** Problems of POST /vault-forward; each response also carries `x-vault-forward-error: true`. */
export const ForwardingErrors = {
  // Sending's own problems (outbound/ cannot import this file) are problems of POST /vault-forward too.
  ...OutboundErrors,
  // So are the answer's, under a config's response rules.
  ...ForwardResponseErrors,
  // And the token requestor's, when CARD_CRYPTOGRAM_X asks it for a cryptogram (decision 0100).
  ...TokenRequestorErrors,
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
      'x-vault-forward-checkout-session); an expression that is half-written or calls an unknown function; a ' +
      'SECRET.name that no template-secrets method listed in x-vault-forward-authentications holds, or that two ' +
      'hold; or a value the body’s content type cannot carry. Nothing was sent. See docs/placeholders.md.',
  }),
  endpointNotEnabled: defineProblem({
    code: 'endpoint-not-enabled',
    status: 403,
    title: 'Target not enabled',
    description:
      'No enabled forwarding config of this merchant account lists the target host (host:port when not 443) with ' +
      'this HTTP method. Add one with POST /vault-forward/configs.',
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
};
