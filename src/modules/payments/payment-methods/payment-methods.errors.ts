import { defineProblem } from '../../../platform/problem/problem';

export const PaymentMethodErrors = {
  notFound: defineProblem({
    code: 'payment-method-not-found',
    status: 404,
    title: 'Payment method not found',
    description: 'No payment method with this id exists in the merchant account of the request.',
  }),
};

export const NetworkTokenErrors = {
  notFound: defineProblem({
    code: 'network-token-not-found',
    status: 404,
    title: 'Network token not found',
    description: 'No network token with this id exists for this payment method in the merchant account of the request.',
  }),
};
