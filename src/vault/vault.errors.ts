import { defineProblem } from '../common/problem/problem';

export const VaultErrors = {
  invalidPaymentMethodsHeader: defineProblem({
    code: 'invalid-payment-methods-header',
    status: 400,
    title: 'Malformed x-vault-forward-payment-methods',
    description: 'The header must list 1 to 100 payment method UUIDs separated by commas, each at most once. Position X of the list fills the placeholders ending in _X.',
  }),
  unknownPaymentMethod: defineProblem({
    code: 'unknown-payment-method',
    status: 400,
    title: 'Payment method not found',
    description:
      'A payment method listed in x-vault-forward-payment-methods does not exist in the merchant account of the request (unknown, deleted, or another merchant’s). Nothing was sent.',
  }),
};
