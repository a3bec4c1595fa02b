import { defineProblem } from '../../../platform/problem/problem';

export const VaultForwardConfigErrors = {
  notFound: defineProblem({
    code: 'vault-forward-config-not-found',
    status: 404,
    title: 'Forwarding config not found',
    description: 'No forwarding config with this id exists in the merchant account of the request.',
  }),
  duplicate: defineProblem({
    code: 'duplicate-record',
    status: 409,
    title: 'Config exists for this definition',
    description:
      'The merchant account has a forwarding config for this definition already (one per definition, as Gr4vy). ' +
      'Update or delete that config instead.',
  }),
};
