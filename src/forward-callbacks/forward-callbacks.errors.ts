import { defineProblem } from '../common/problem/problem';

/** Problems of x-vault-forward-callback-url on a queued POST /vault-forward. */
export const ForwardCallbackErrors = {
  invalidCallbackUrl: defineProblem({
    code: 'invalid-callback-url',
    status: 400,
    title: 'Callback URL not allowed',
    description:
      'x-vault-forward-callback-url must be an absolute https URL (http only for hosts in FORWARD_INSECURE_HOSTS) without credentials, not an IP literal outside public address space, whose host (host:port when not 443) is listed by one of the merchant account\'s enabled forwarding configs. Nothing was queued.',
  }),
};
