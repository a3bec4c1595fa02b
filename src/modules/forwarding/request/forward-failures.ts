/**
 * What a forward's failure says about trying it again (the queued path's retry policy reads both):
 *
 *   isRetryable(error): boolean        whether trying the same plan again later may succeed
 *   reachedDownstream(error): boolean  false when nothing of the request can have reached the target
 */
import { CommonErrors } from '../../../platform/problem/common.errors';
import { isDatabaseUnavailable } from '../../../platform/problem/database-errors';
import { ProblemException } from '../../../platform/problem/problem';
import { CheckoutSessionErrors } from '../../payments/checkout-sessions/checkout-sessions.errors';
import { DownstreamProblem } from '../sending/downstream-client';
import { ForwardingErrors } from './forwarding.errors';

/** Codes whose cause may pass: the target unreachable or slow, this service briefly without room or database. */
const RETRYABLE_CODES = new Set([
  // Another forward holds the session's security code: once it is answered, the code is erased or free again.
  CheckoutSessionErrors.inUse.code,
  ForwardingErrors.downstreamUnreachable.code,
  ForwardingErrors.downstreamTimeout.code,
  // The token requestor (decision 0100) or a token endpoint (0123) away or slow: a later attempt asks again.
  ForwardingErrors.tokenEndpointFailed.code,
  ForwardingErrors.tokenEndpointTimeout.code,
  ForwardingErrors.tokenRequestorFailed.code,
  ForwardingErrors.tokenRequestorTimeout.code,
  CommonErrors.serviceUnavailable.code,
]);

/**
 * Whether the same plan may succeed later: network failures and timeouts of the downstream (502
 * downstream-unreachable, 504 downstream-timeout), any 503 of this service (database or spool
 * unavailable, capacity), and a checkout session's security code held by another forward (409).
 * Every other problem (4xx: a card, method or config deleted since planning, a filled value a header
 * cannot carry, …) would fail again.
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof ProblemException) return RETRYABLE_CODES.has(error.definition.code) || error.status === 503;
  return isDatabaseUnavailable(error);
}

/** Errors thrown once the downstream had answered (its answer's response rules: a card stored, the key store away). */
const afterAnswer = new WeakSet<object>();

/**
 * False when nothing of the request can have reached the downstream: it failed before the send
 * (any problem that is not a DownstreamProblem, and was not thrown after the answer), or the
 * connection was never made.
 */
export function reachedDownstream(error: unknown): boolean {
  if (typeof error === 'object' && error !== null && afterAnswer.has(error)) return true;
  return error instanceof DownstreamProblem && error.reachedDownstream;
}

/** `error` was thrown once the downstream had answered: the request was sent (a failure after the send, not before). */
export function markedAfterAnswer(error: unknown): void {
  if (typeof error === 'object' && error !== null) afterAnswer.add(error);
}
