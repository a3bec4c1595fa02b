import { defineProblem } from '../../../platform/problem/problem';

/** Problems of an Idempotency-Key on POST /vault-forward (both paths). */
export const IdempotencyErrors = {
  invalidKey: defineProblem({
    code: 'invalid-idempotency-key',
    status: 400,
    title: 'Malformed Idempotency-Key',
    description: 'Idempotency-Key must be 1–255 printable ASCII characters. Nothing was sent.',
  }),
  keyReused: defineProblem({
    code: 'idempotency-key-reused',
    status: 422,
    title: 'Idempotency-Key used for a different request',
    description:
      'This Idempotency-Key was used within the last 24 hours for a different request (method, target URL, ' +
      'x-vault-forward-* headers, body or synchronous/queued). Use a new key for a new request. Nothing was sent.',
  }),
  keyInProgress: defineProblem({
    code: 'idempotency-key-in-progress',
    status: 409,
    title: 'A request with this Idempotency-Key is still running',
    description:
      'The first request with this Idempotency-Key has not finished yet. Retry after it has: the repeat then ' +
      'replays its answer. Nothing was sent.',
  }),
};
