import { defineProblem } from '../../../platform/problem/problem';

/** Problems of the disclosure budgets (decision 0134): POST /vault-forward refused, and the budget routes. */
export const DisclosureBudgetErrors = {
  exceeded: defineProblem({
    code: 'disclosure-budget-exceeded',
    status: 429,
    title: 'Disclosure budget exceeded',
    description:
      'The forward would disclose more distinct cards in the current window than the merchant account’s or the ' +
      'config’s disclosure budget allows, or disclose one card more often than its per-card budget allows. ' +
      'Nothing was sent and no card was opened; the refusal is recorded, counted in ' +
      '`vault_forward_disclosure_budget_refusals_total` and announced once per budget and window with a signed ' +
      '`disclosure_budget.exceeded` webhook when a webhook URL is set. `Retry-After` gives the seconds until the ' +
      'window ends. Budgets are set with PUT /vault-forward/budget and PUT /vault-forward/configs/{id}/budget.',
  }),
  placeholderNotAllowed: defineProblem({
    code: 'placeholder-not-allowed',
    status: 400,
    title: 'Placeholder not allowed by the config',
    description:
      'The config that enables the target limits which placeholders it may fill (its budget’s ' +
      '`allowed_placeholders`), and the request uses one it does not list, for example `{{ CARD_NUMBER_1 }}` for ' +
      'a fraud tool that may get only the expiry and the cardholder name. The problem names the placeholder and ' +
      'where it is. Nothing was sent and no card was opened.',
  }),
};
