import { defineProblem } from '../../../platform/problem/problem';

export const InboundRequestErrors = {
  notFound: defineProblem({
    code: 'inbound-request-not-found',
    status: 404,
    title: 'Inbound request record not found',
    description: 'No record of an inbound request with this id exists in the merchant account of the request.',
  }),
};
