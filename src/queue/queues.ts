/** Queue names, shared by the API (producer) and the worker (consumer). */
export const VAULT_FORWARD_QUEUE = 'vault-forwards';
