/** The forward route; the body parsers and the problem filter treat it specially. */
export const FORWARD_ROUTE = '/vault-forward';
