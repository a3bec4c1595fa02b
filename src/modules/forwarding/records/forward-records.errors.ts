import { defineProblem } from '../../../platform/problem/problem';

/** Problems of the forward records' routes (GET /vault-forward/requests…). */
export const ForwardRecordErrors = {
  recordNotFound: defineProblem({
    code: 'vault-forward-request-not-found',
    status: 404,
    title: 'Forward record not found',
    description: 'No forward with this request id exists in the merchant account of the request.',
  }),
};
