import { defineProblem } from '../../../platform/problem/problem';

export const BuyerErrors = {
  notFound: defineProblem({
    code: 'buyer-not-found',
    status: 404,
    title: 'Buyer not found',
    description: 'No buyer with this id exists in the merchant account of the request.',
  }),
  duplicateExternalIdentifier: defineProblem({
    code: 'buyer-external-identifier-exists',
    status: 409,
    title: 'External identifier already used',
    description:
      'Another buyer of this merchant account already has this `external_identifier`; it is unique per merchant account.',
  }),
};
