import { defineProblem } from '../../../platform/problem/problem';

export const SecureFieldsErrors = {
  notBuilt: defineProblem({
    code: 'secure-fields-not-built',
    status: 503,
    title: 'Secure Fields not built',
    description:
      'The Secure Fields frames are served from dist/secure-fields, which this installation does not have: run ' +
      '`npm run build`. Card submissions on the secure-fields origin still work. See docs/checkout-sessions.md.',
  }),
};
