/** Queue names, shared by the API (producer) and the worker (consumer). */
export const VAULT_FORWARD_QUEUE = 'vault-forwards';
/**
 * The job-end callbacks' queue (its injection token); its BullMQ name is the forward queue's configured
 * name + CALLBACK_QUEUE_SUFFIX, so tests' own forward queue names keep their callbacks apart too.
 */
export const VAULT_CALLBACK_QUEUE = 'vault-forward-callbacks';
export const CALLBACK_QUEUE_SUFFIX = '-callbacks';
