import { defineProblem } from '../common/problem/problem';

export const PaymentMethodErrors = {
  notFound: defineProblem({
    code: 'payment-method-not-found',
    status: 404,
    title: 'Payment method not found',
    description: 'No payment method with this id exists in the merchant account of the request.',
  }),
};
