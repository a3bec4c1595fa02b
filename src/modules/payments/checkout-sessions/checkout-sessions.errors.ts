import { defineProblem } from '../../../platform/problem/problem';

export const CheckoutSessionErrors = {
  notFound: defineProblem({
    code: 'checkout-session-not-found',
    status: 404,
    title: 'Checkout session not found',
    description:
      'No checkout session with this id exists in the merchant account of the request (unknown, deleted, or another merchant’s).',
  }),
  expired: defineProblem({
    code: 'checkout-session-expired',
    status: 410,
    title: 'Checkout session expired',
    description:
      'The checkout session has passed its expires_at. Its card data and security code have been erased; create ' +
      'a new session and collect the card again. See docs/checkout-sessions.md.',
  }),
  noCard: defineProblem({
    code: 'checkout-session-has-no-card',
    status: 409,
    title: 'Checkout session holds no card',
    description:
      'No card has been collected into this checkout session yet (PUT /checkout/sessions/{id}/fields), or the ' +
      'stored payment method it named was deleted.',
  }),
  securityCodeErased: defineProblem({
    code: 'checkout-session-security-code-erased',
    status: 410,
    title: 'Security code already used',
    description:
      'The security code of this checkout session was erased after a forward that used it was answered by its ' +
      'target (PCI DSS forbids keeping it after authorisation). Collect it again with PUT ' +
      '/checkout/sessions/{id}/fields. See docs/checkout-sessions.md.',
  }),
  inUse: defineProblem({
    code: 'checkout-session-in-use',
    status: 409,
    title: 'Security code in use',
    description:
      'Another forward that fills this checkout session’s security code is in flight; the code leaves at most ' +
      'once at a time. Retry when that forward has been answered: after an answer below 500 the code is erased ' +
      '(checkout-session-security-code-erased), after a 5xx or a failure it can be sent again. See ' +
      'docs/checkout-sessions.md.',
  }),
  cardIsStored: defineProblem({
    code: 'checkout-session-card-is-stored',
    status: 409,
    title: 'Card already stored',
    description:
      'The checkout session’s card is a stored payment method already (it was collected with method "id"); use that payment method.',
  }),
  secureFieldsOriginRefused: defineProblem({
    code: 'secure-fields-origin-not-allowed',
    status: 403,
    title: 'Origin not allowed for Secure Fields',
    description:
      'The page embedding the Secure Fields (x-secure-fields-parent-origin, the frames’ parentOrigin) is not an ' +
      'origin the checkout session’s merchant account lists in secure_fields_origins. Nothing was stored. See ' +
      'docs/checkout-sessions.md.',
  }),
  secureFieldsTriesExhausted: defineProblem({
    code: 'secure-fields-tries-exhausted',
    status: 429,
    title: 'Too many Secure Fields submissions',
    description:
      'The checkout session has had its 10 submissions from the Secure Fields (successful or not); it takes no more ' +
      'from the browser. Create a new checkout session. See docs/checkout-sessions.md.',
  }),
};
