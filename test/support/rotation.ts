/**
 * What `vault rotate-keys` reports, with every sealed table at zero and no failures unless `changes`
 * says otherwise: one literal list of the result's fields, so a table added to the rotation is
 * added here once, and each test states only the counts it is about.
 */
export function rotationResult(changes: Record<string, unknown>): Record<string, unknown> {
  return {
    master_key_id: 'test-k2',
    rewrapped_payment_methods: 0,
    rewrapped_merchant_keys: 0,
    failed_payment_methods: [],
    failed_merchant_keys: [],
    rewrapped_authentication_methods: 0,
    failed_authentication_methods: [],
    rewrapped_webhook_secrets: 0,
    failed_webhook_secrets: [],
    rewrapped_forward_record_bodies: 0,
    failed_forward_record_bodies: [],
    rewrapped_forward_job_plans: 0,
    failed_forward_job_plans: [],
    rewrapped_forward_job_responses: 0,
    failed_forward_job_responses: [],
    rewrapped_idempotent_responses: 0,
    failed_idempotent_responses: [],
    rewrapped_callback_deliveries: 0,
    failed_callback_deliveries: [],
    rewrapped_forward_job_callback_urls: 0,
    failed_forward_job_callback_urls: [],
    rewrapped_checkout_sessions: 0,
    failed_checkout_sessions: [],
    rewrapped_network_tokens: 0,
    failed_network_tokens: [],
    rewrapped_inbound_routes: 0,
    failed_inbound_routes: [],
    rewrapped_inbound_requests: 0,
    failed_inbound_requests: [],
    remaining: 0,
    ...changes,
  };
}
