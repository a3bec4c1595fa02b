import { defineProblem } from '../../../platform/problem/problem';

export const MerchantAccountErrors = {
  notFound: defineProblem({
    code: 'merchant-account-not-found',
    status: 404,
    title: 'Merchant account not found',
    description: 'No merchant account has this id.',
  }),
  duplicateId: defineProblem({
    code: 'merchant-account-exists',
    status: 409,
    title: 'Merchant account id taken',
    description: 'A merchant account with this id already exists. Ids are permanent; choose another.',
  }),
  featureUnavailable: defineProblem({
    code: 'merchant-account-feature-unavailable',
    status: 422,
    title: 'Feature not available',
    description:
      'The request would turn on a merchant account feature this service does not have (account updater, network ' +
      'tokens, over-capture, Loon). Send false or null for it, or leave it out; `errors` names each such field.',
  }),
};
