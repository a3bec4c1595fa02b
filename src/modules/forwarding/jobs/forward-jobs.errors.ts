import { defineProblem } from '../../../platform/problem/problem';

/** Problems of queued forwards (POST /vault-forward with Prefer: respond-async, /vault-forward/jobs). */
export const ForwardJobErrors = {
  queueUnavailable: defineProblem({
    code: 'forward-queue-unavailable',
    status: 503,
    title: 'Queued forwarding unavailable',
    description:
      'The job queue is down, or this deployment runs none (QUEUE_BACKEND=none), so a queued forward cannot be ' +
      'accepted now; no job was kept and nothing was sent. Retry after the seconds Retry-After gives, or forward ' +
      'synchronously (without Prefer: respond-async), which does not need the queue.',
  }),
  jobNotFound: defineProblem({
    code: 'vault-forward-job-not-found',
    status: 404,
    title: 'Queued forward not found',
    description: 'No queued forward with this id exists in the merchant account of the request.',
  }),
  jobNotCancellable: defineProblem({
    code: 'vault-forward-job-not-cancellable',
    status: 409,
    title: 'Queued forward cannot be cancelled',
    description:
      'Only a job waiting for its next attempt (status queued) can be cancelled; this one is running or has ended.',
  }),
};
