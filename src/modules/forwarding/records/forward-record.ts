import type { SealedText } from '../../vault/secret-sealer';

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
  /** The API key that sent the forward (absent in spool entries written before the ledger, and for the CLI's). */
  apiKeyId?: string | null;
  /** The placeholders filled, as `NAME_POSITION` (CARD_NUMBER_1): what the ledger says was disclosed. */
  filledFields?: string[];
  /** Decision 0104: the redacted request and answer (set only when the config asks for them, decision 0138). */
  bodies?: RecordedBodies;
  /** The bodies sealed by ForwardRecordsService.write (base64, so a spool line carries them): never plain text. */
  sealedBodies?: SealedBodies;
  /** Set when the disclosure went to the spool: the row's created_at if the outcome reaches the table first. */
  spooledAt?: string;
  /** Set when the disclosure was committed to the table: the outcome is then an UPDATE of that row. */
  disclosedInTable?: boolean;
  /** Set once the disclosure is durable (table or spool): the card data was released, so its outcome counts a use of each card. */
  disclosed?: boolean;
}

/**
 * What a record keeps of a forward's request and answer (decision 0104): already redacted, capped and
 * with card numbers masked when it is put on the record. Absent fields are written as null.
 */
interface RecordedBodies {
  /** Days they are kept (the config's record_bodies_retention_days, capped by the operator's ceiling). */
  retentionDays: number;
  requestHeaders?: Record<string, string>;
  requestBody?: string | null;
  requestBodyTruncated?: boolean;
  responseBody?: string | null;
  responseBodyTruncated?: boolean;
}

/** RecordedBodies as stored: the three texts sealed as one JSON value, the truncation flags beside it. */
export interface SealedBodies extends SealedText {
  requestBodyTruncated: boolean;
  responseBodyTruncated: boolean;
  /** Days they are kept (absent in spool entries written before decision 0138: purged at once). */
  retentionDays?: number;
}
