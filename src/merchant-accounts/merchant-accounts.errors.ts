import { defineProblem } from '../common/problem/problem';

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
};
