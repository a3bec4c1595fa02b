import { defineProblem } from '../../../platform/problem/problem';

/** Problems of the ledger's routes (decision 0133). */
export const LedgerErrors = {
  notSealed: defineProblem({
    code: 'ledger-entry-not-sealed',
    status: 409,
    title: 'Ledger entry not sealed yet',
    description:
      'The record has ledger entries that no signed tree head covers yet: heads are signed every LEDGER_SEAL_INTERVAL. ' +
      'Retry after the seconds in Retry-After.',
  }),
  notInLedger: defineProblem({
    code: 'ledger-entry-not-found',
    status: 404,
    title: 'No ledger entry for this record',
    description:
      'The merchant account has no ledger entry for this request id: no such forward, a forward that disclosed no ' +
      'card and used no stored secret, one written while the ledger was off, or one purged past LEDGER_RETENTION.',
  }),
  headNotFound: defineProblem({
    code: 'ledger-head-not-found',
    status: 404,
    title: 'Ledger head not found',
    description: 'No signed tree head has this seq.',
  }),
  headsOutOfOrder: defineProblem({
    code: 'ledger-heads-out-of-order',
    status: 400,
    title: 'Heads out of order',
    description: '`from` must name a head no newer than `to`, and neither may be empty.',
  }),
  inconsistent: defineProblem({
    code: 'ledger-inconsistent',
    status: 409,
    title: 'Ledger inconsistent',
    description:
      'The ledger’s stored entries do not agree with its signed heads (an entry missing, out of place or with an ' +
      'impossible value): no proof is made from it. An operator runs `ledger verify` to find what changed.',
  }),
  purged: defineProblem({
    code: 'ledger-range-purged',
    status: 410,
    title: 'Ledger range purged',
    description: 'The proof needs entries deleted past LEDGER_RETENTION; a purge head records what was kept of them.',
  }),
};
