import { defineProblem } from '../common/problem/problem';

export const VaultForwardConfigErrors = {
  notFound: defineProblem({
    code: 'vault-forward-config-not-found',
    status: 404,
    title: 'Forwarding config not found',
    description: 'No forwarding config with this id exists in the merchant account of the request.',
  }),
};
