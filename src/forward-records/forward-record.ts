/**
 * One forward's disclosure record, as the writer batches it and the spool stores it: its own file so
 * that both import it and neither imports the other.
 */
export interface ForwardRecord {
  id: string;
  merchantAccountId: string;
  configId: string | null;
  method: string | null;
  targetUrl: string | null;
  status: number | null;
  durationMs: number;
  paymentMethodIds: string[];
  /** The checkout session whose card the forward may disclose (absent in spool entries written before sessions). */
  checkoutSessionId?: string | null;
  authenticationIds: string[];
  /** x-vault-forward-merchant-initiated (absent in spool entries written before it: false). */
  merchantInitiated?: boolean;
  errorType: string | null;
  /** Set when the disclosure went to the spool: the row's created_at if the outcome reaches the table first. */
  spooledAt?: string;
  /** Set when the disclosure was committed to the table: the outcome is then an UPDATE of that row. */
  disclosedInTable?: boolean;
  /** Set once the disclosure is durable (table or spool): the card data was released, so its outcome counts a use of each card. */
  disclosed?: boolean;
}
