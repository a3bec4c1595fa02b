import { defineProblem } from '../../../platform/problem/problem';

export const VaultForwardDefinitionErrors = {
  notFound: defineProblem({
    code: 'vault-forward-definition-not-found',
    status: 404,
    title: 'Forwarding definition not found',
    description:
      'No definition with this id exists: neither in the shipped catalog, nor added by the instance administrator, ' +
      'nor the custom definition of a config of the merchant account of the request.',
  }),
  exists: defineProblem({
    code: 'vault-forward-definition-exists',
    status: 409,
    title: 'Forwarding definition exists',
    description: 'A definition with this id exists already (in the shipped catalog or added earlier). Pick another id.',
  }),
  readOnly: defineProblem({
    code: 'vault-forward-definition-read-only',
    status: 409,
    title: 'Forwarding definition is read-only',
    description:
      'Definitions of the shipped catalog and the custom definitions of configs cannot be changed or deleted ' +
      'through this route; only the definitions an instance administrator added can.',
  }),
  inUse: defineProblem({
    code: 'vault-forward-definition-in-use',
    status: 409,
    title: 'Forwarding definition in use',
    description: 'Configs of some merchant accounts use this definition; delete them first.',
  }),
};
