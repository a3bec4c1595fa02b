/**
 * Every table that holds sealed data, so that `vault rotate-keys` (KeyRotationService) walks them all
 * with one loop. A table that stores secrets adds an entry here and gets rotation, the `remaining`
 * count and its cache refresh without rotation code of its own.
 *
 * Conventions of a sealed table: columns `wrapped_key` (bytea) and `master_key_id` (text, indexed),
 * plus `ciphertext` (bytea) for the `record` layout; its AAD is boundAad(purpose, ...aadColumns).
 */
export interface SealedTable {
  /** Names the table in the rotation result: `rewrapped_<name>`, `failed_<name>`. */
  name: string;
  table: string;
  /** The primary key, which the walk pages by. */
  key: string;
  keyType: 'uuid' | 'text';
  /**
   * `record`: `wrapped_key` is a data key that encrypts `ciphertext` (SecretSealer, envelope.seal);
   * `secret`: `wrapped_key` is the secret itself, wrapped by the master key (envelope.wrapSecret).
   */
  layout: 'record' | 'secret';
  purpose: string;
  /** The columns whose values, in this order, follow the purpose in the AAD. */
  aadColumns: readonly string[];
  /** How failures name a row (in the log); ids only. */
  describe: string;
  /** The SharedCache that holds this table's sealed rows: dropped in every process after a run. */
  cache?: string;
}

export const SEALED_TABLES: readonly SealedTable[] = [
  {
    name: 'payment_methods',
    table: 'payment_methods',
    key: 'id',
    keyType: 'uuid',
    layout: 'record',
    purpose: 'payment-method',
    aadColumns: ['merchant_account_id', 'id'],
    describe: 'payment method',
    cache: 'sealed-payment-methods',
  },
  {
    name: 'merchant_keys',
    table: 'vault_merchant_keys',
    key: 'merchant_account_id',
    keyType: 'text',
    layout: 'secret',
    purpose: 'fingerprint-key',
    aadColumns: ['merchant_account_id'],
    describe: 'fingerprint key of',
  },
  {
    name: 'authentication_methods',
    table: 'vault_forward_authentications',
    key: 'id',
    keyType: 'uuid',
    layout: 'record',
    purpose: 'forward-authentication',
    aadColumns: ['merchant_account_id', 'config_id', 'id'],
    describe: 'authentication method',
    cache: 'sealed-forward-authentications',
  },
  {
    name: 'webhook_secrets',
    table: 'vault_forward_webhook_secrets',
    key: 'id',
    keyType: 'uuid',
    layout: 'record',
    purpose: 'webhook-secret',
    aadColumns: ['merchant_account_id', 'id'],
    describe: 'webhook signing secret',
  },
  {
    name: 'forward_record_bodies',
    table: 'vault_forward_requests',
    key: 'id',
    keyType: 'text',
    layout: 'record',
    purpose: 'forward-record-bodies',
    aadColumns: ['merchant_account_id', 'id'],
    describe: 'bodies of forward record',
  },
  {
    name: 'forward_job_plans',
    table: 'vault_forward_job_plans',
    key: 'job_id',
    keyType: 'uuid',
    layout: 'record',
    purpose: 'forward-job-plan',
    aadColumns: ['merchant_account_id', 'job_id'],
    describe: 'plan of queued forward',
  },
  {
    name: 'forward_job_responses',
    table: 'vault_forward_job_responses',
    key: 'job_id',
    keyType: 'uuid',
    layout: 'record',
    purpose: 'forward-job-response',
    aadColumns: ['merchant_account_id', 'job_id'],
    describe: 'response of queued forward',
  },
  {
    name: 'idempotent_responses',
    table: 'vault_forward_idempotency_keys',
    key: 'id',
    keyType: 'uuid',
    layout: 'record',
    purpose: 'idempotent-response',
    aadColumns: ['merchant_account_id', 'key', 'id'],
    describe: 'idempotent response',
  },
  {
    name: 'callback_deliveries',
    table: 'vault_forward_callback_deliveries',
    key: 'id',
    keyType: 'uuid',
    layout: 'record',
    purpose: 'callback-body',
    aadColumns: ['merchant_account_id', 'id'],
    describe: 'callback delivery',
  },
  {
    name: 'forward_job_callback_urls',
    table: 'vault_forward_job_callback_urls',
    key: 'job_id',
    keyType: 'uuid',
    layout: 'record',
    purpose: 'forward-job-callback-url',
    aadColumns: ['merchant_account_id', 'job_id'],
    describe: 'callback URL of queued forward',
  },
  {
    // Card number and security code are parts of one envelope (sealParts); erased rows have NULL keys,
    // which the rotation's `master_key_id <> current` never selects.
    name: 'checkout_sessions',
    table: 'checkout_sessions',
    key: 'id',
    keyType: 'uuid',
    layout: 'record',
    purpose: 'checkout-session',
    aadColumns: ['merchant_account_id', 'id'],
    describe: 'checkout session',
  },
  {
    name: 'network_tokens',
    table: 'payment_method_network_tokens',
    key: 'id',
    keyType: 'uuid',
    layout: 'record',
    purpose: 'network-token',
    aadColumns: ['merchant_account_id', 'payment_method_id', 'id'],
    describe: 'network token',
  },
  {
    // The caller secret (shared-secret, hmac) in ciphertext and the upstream headers in a part beside it, under one
    // data key; a route with neither has NULL keys, never selected.
    name: 'inbound_routes',
    table: 'inbound_routes',
    key: 'id',
    keyType: 'uuid',
    layout: 'record',
    purpose: 'inbound-route-secret',
    aadColumns: ['merchant_account_id', 'id'],
    describe: 'caller secret of inbound route',
  },
  {
    // Only records of routes with record_bodies keep bodies; the purge nulls them past their retention.
    name: 'inbound_requests',
    table: 'inbound_requests',
    key: 'id',
    keyType: 'uuid',
    layout: 'record',
    purpose: 'inbound-request-bodies',
    aadColumns: ['merchant_account_id', 'id'],
    describe: 'bodies of inbound request',
  },
];
