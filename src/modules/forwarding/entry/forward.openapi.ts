import { AuthErrors } from '../../merchants/access/auth.errors';
import { CheckoutSessionErrors } from '../../payments/checkout-sessions/checkout-sessions.errors';
import {
  DEFAULT_MERCHANT_ACCOUNT_ID,
  MERCHANT_HEADER,
  MERCHANT_HEADER_ALIAS,
} from '../../merchants/auth/authenticator.service';
import { withProblems } from '../../../platform/openapi/api-problems';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ForwardAuthenticationErrors } from '../../forwarding-setup/authentication-methods/forward-authentications.errors';
import { ForwardJobErrors } from '../jobs/forward-jobs.errors';
import { IdempotencyErrors } from '../idempotency/idempotency.errors';
import { FORWARD_ROUTE } from './forward-route';
import { ForwardingErrors } from '../request/forwarding.errors';
import { VaultErrors } from '../../vault/vault.errors';
import { DisclosureBudgetErrors } from '../budgets/disclosure-budgets.errors';

/** The schema name of the queued job (ForwardJobResponse, documented by GET /vault-forward/jobs/{id}). */
const JOB_SCHEMA_REF = '#/components/schemas/ForwardJobResponse';

function header(name: string, required: boolean, description: string): Record<string, unknown> {
  return { name, in: 'header', required, description, schema: { type: 'string' } };
}

/**
 * POST /vault-forward, written into the document by hand: the route is served by ForwardHttpHandler
 * straight from Node's server, ahead of fastify and Nest, so no controller method exists to carry
 * decorators (one that only documented it would have to be a route that throws).
 */
export function forwardOperation(): { path: string; method: 'post'; operation: Record<string, unknown> } {
  const problems = withProblems({}, [
    CommonErrors.validationFailed,
    CommonErrors.payloadTooLarge,
    CommonErrors.serviceUnavailable,
    CommonErrors.internalError,
    AuthErrors.unauthorized,
    AuthErrors.forbidden,
    AuthErrors.merchantAccountMismatch,
    AuthErrors.merchantAccountUnknown,
    ForwardingErrors.invalidHeader,
    ForwardingErrors.unknownHeader,
    ForwardingErrors.invalidPlaceholder,
    ForwardingErrors.insecureTarget,
    ForwardingErrors.endpointNotEnabled,
    ForwardingErrors.targetAddressForbidden,
    ForwardingErrors.filledBodyTooLarge,
    ForwardingErrors.capacityExceeded,
    ForwardingErrors.downstreamUnreachable,
    ForwardingErrors.downstreamTimeout,
    ForwardingErrors.downstreamResponseTooLarge,
    ForwardingErrors.responseTooLargeForRules,
    ForwardingErrors.responseNotProcessable,
    ForwardingErrors.responseCardUnusable,
    ForwardingErrors.unmatchedCardNumber,
    ForwardingErrors.tokenRequestorFailed,
    ForwardingErrors.tokenRequestorTimeout,
    ForwardingErrors.tokenEndpointFailed,
    ForwardingErrors.tokenEndpointTimeout,
    ForwardAuthenticationErrors.notUsable,
    ForwardAuthenticationErrors.conflict,
    ForwardAuthenticationErrors.invalid,
    ForwardAuthenticationErrors.unreadable,
    ForwardingErrors.invalidPaymentMethodsHeader,
    ForwardingErrors.unknownPaymentMethod,
    ForwardingErrors.unknownCheckoutSession,
    CheckoutSessionErrors.expired,
    CheckoutSessionErrors.noCard,
    CheckoutSessionErrors.securityCodeErased,
    CheckoutSessionErrors.inUse,
    IdempotencyErrors.invalidKey,
    IdempotencyErrors.keyInProgress,
    IdempotencyErrors.keyReused,
    ForwardJobErrors.queueUnavailable,
    VaultErrors.keyStoreUnavailable,
    VaultErrors.masterKeyMismatch,
    DisclosureBudgetErrors.placeholderNotAllowed,
    DisclosureBudgetErrors.exceeded,
  ]);
  const ownError = {
    description: 'Always `true` on an error of this service, never on the downstream’s answer.',
    schema: { type: 'string', enum: ['true'] },
  };
  const requestId = {
    description: 'The forward record: GET /vault-forward/requests/{id}.',
    schema: { type: 'string' },
  };
  for (const response of Object.values<{ headers?: Record<string, unknown> }>(problems)) {
    response.headers = { 'x-vault-forward-error': ownError };
  }
  const job = {
    headers: {
      location: { description: 'The job: /vault-forward/jobs/{id}.', schema: { type: 'string' } },
      'preference-applied': {
        description: 'Always `respond-async`.',
        schema: { type: 'string', enum: ['respond-async'] },
      },
    },
    content: { 'application/json': { schema: { $ref: JOB_SCHEMA_REF } } },
  };
  return {
    path: FORWARD_ROUTE,
    method: 'post',
    operation: {
      operationId: 'ForwardingController_forward',
      tags: ['Forwarding'],
      summary: 'Forward a request to an enabled target with card placeholders filled from the vault',
      description:
        'The body (any content type, up to 1 MiB) is sent on byte for byte except for placeholders ' +
        '(docs/placeholders.md). The answer is the downstream’s status, headers (less hop-by-hop, set-cookie and ' +
        'x-vault-forward-*) and body, plus x-vault-forward-request-id; short answers are sent whole, longer ones ' +
        'stream (at most 10 MiB). Errors made by this service carry x-vault-forward-error: true.',
      'x-required-scope': 'vault-forwards.write',
      security: [{ bearer: [] }],
      parameters: [
        header(
          MERCHANT_HEADER,
          false,
          `Merchant account to act for (instance keys; default "${DEFAULT_MERCHANT_ACCOUNT_ID}"). A ` +
            `merchant-bound key may send only its own id.`,
        ),
        header(MERCHANT_HEADER_ALIAS, false, `Alias of ${MERCHANT_HEADER}.`),
        header('x-vault-forward-url', true, 'Absolute https URL of the target.'),
        header('x-vault-forward-http-method', true, 'GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS.'),
        header(
          'x-vault-forward-payment-methods',
          false,
          '1–100 payment method UUIDs, comma-separated; position X fills *_X placeholders.',
        ),
        header(
          'x-vault-forward-checkout-session',
          false,
          'Instead of x-vault-forward-payment-methods: one checkout session id; its card fills the _1 ' +
            'placeholders and CARD_SECURITY_CODE_1.',
        ),
        header(
          'x-vault-forward-authentications',
          false,
          'Authentication method UUIDs of the target’s config, comma-separated, applied in order after the placeholders ' +
            'are filled; a template-secrets method applies nothing and lends its secret to `hmac_sha256(SECRET.name)` ' +
            '(docs/placeholders.md#secrets-for-hmac_sha256).',
        ),
        header('x-vault-forward-timeout', false, 'Whole seconds, 1–120 (default 30).'),
        {
          ...header(
            'x-vault-forward-merchant-initiated',
            false,
            'Gr4vy’s: `true` when the merchant, not the cardholder, starts this forward (a merchant-initiated ' +
              'use of a stored card). Recorded on the forward record (`merchant_initiated`); default `false`.',
          ),
          schema: { type: 'string', enum: ['true', 'false'] },
        },
        header(
          'x-vault-forward-cryptograms',
          false,
          'Per-request cryptograms of the listed cards’ network tokens, comma-separated by position as in ' +
            'x-vault-forward-payment-methods (an empty entry: none for that card); each 8–128 base64 or hex ' +
            'characters. Fills CARD_CRYPTOGRAM_X; never logged or stored. Refused on a queued forward (the ' +
            'worker asks the token requestor instead). See docs/placeholders.md#cryptograms.',
        ),
        header(
          'x-vault-forward-header-authorization',
          false,
          'Sent downstream as Authorization. Any x-vault-forward-header-NAME is sent as NAME.',
        ),
        header(
          'prefer',
          false,
          '`respond-async` (RFC 7240) queues the forward: checked as now, then answered 202 with the job ' +
            '(Location: /vault-forward/jobs/{id}, Preference-Applied: respond-async); a worker sends it and ' +
            'retries.',
        ),
        header('x-vault-forward-max-attempts', false, 'Queued forwards only: 1–20 attempts (default 5).'),
        header(
          'x-vault-forward-callback-url',
          false,
          'Queued forwards only: where the ended job is POSTed (a host one of the merchant’s configs enables; https).',
        ),
        header(
          'idempotency-key',
          false,
          '1–255 printable characters. On a queued POST or PATCH it permits retries after an answer, and is forwarded downstream.',
        ),
      ],
      requestBody: {
        required: false,
        description: 'Sent on as is, placeholders filled.',
        content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
      },
      responses: {
        ...problems,
        '200': {
          description:
            'Prefer: respond-async repeated with the same Idempotency-Key: the job the first request queued, ' +
            'as it is now, with Idempotent-Replayed: true.',
          ...job,
          headers: {
            ...job.headers,
            'idempotent-replayed': { description: 'Always `true`.', schema: { type: 'string', enum: ['true'] } },
          },
        },
        '202': {
          description:
            'Prefer: respond-async: the job, queued. A repeat with the same Idempotency-Key answers 200 with the ' +
            'same job and Idempotent-Replayed: true.',
          ...job,
        },
        default: {
          description:
            'The downstream’s own answer, whatever its status, headers and body (no x-vault-forward-error header), ' +
            'compressed as it came unless the config’s response rules or unmatched_pan apply (then decoded). A repeat ' +
            'with the same Idempotency-Key gets the stored answer (Idempotent-Replayed: true): decoded and masked, ' +
            'or, when it did not decode within the caps, an empty body with x-vault-forward-not-kept saying why ' +
            '(decision 0137).',
          headers: { 'x-vault-forward-request-id': requestId },
          content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
        },
      },
    },
  };
}

/**
 * The downstream answers with the statuses of our problems too, with any body: only
 * x-vault-forward-error tells a client which one it has, so each error response of POST
 * /vault-forward admits any body beside ours (decision 0093). Applied after the problems common to
 * every route are merged in, so those statuses say it as well.
 */
export function admitDownstreamAnswers(responses: Record<string, unknown>): void {
  for (const [status, value] of Object.entries(responses)) {
    if (!/^[45]\d\d$/.test(status)) continue;
    const response = value as {
      description: string;
      headers?: Record<string, unknown>;
      content?: Record<string, { schema: unknown }>;
    };
    response.description +=
      '. Without `x-vault-forward-error: true` this status is the downstream’s own answer, whatever its body.';
    response.headers = {
      'x-vault-forward-error': {
        description: '`true` on an error of this service; absent on the downstream’s answer.',
        schema: { type: 'string', enum: ['true'] },
      },
    };
    for (const media of Object.values(response.content ?? {})) {
      media.schema = { anyOf: [media.schema, { description: 'The downstream’s body, whatever it is.' }] };
    }
    response.content = { ...response.content, '*/*': { schema: { description: 'The downstream’s body.' } } };
  }
}
