import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Min } from 'class-validator';
import { Transform } from 'class-transformer';
import { LEDGER_ENTRY_KINDS, LedgerEntryDocument, LedgerEntryKind, LedgerHeadDocument } from '../ledger-documents';
import { headDocument, LedgerHeadEntity } from '../ledger-head.entity';

const BASE64_HASH = 'SHA-256, base64';

/** A query parameter's digits as a number; anything else fails IsInt (NaN). */
const wholeNumber = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : NaN;

/**
 * A signed tree head (decision 0133) of the merchant's own tree (decision 0143): what `ledger verify` and any RFC 9162
 * verifier check proofs against.
 */
export class LedgerHeadResponse implements LedgerHeadDocument {
  @ApiProperty({ type: String, enum: ['vault-forward-ledger-head'] })
  type!: 'vault-forward-ledger-head';
  @ApiProperty({
    type: String,
    description:
      'The merchant whose own tree this head signs: it holds that merchant’s entries only. Its signed bytes begin ' +
      '`["vault-forward-ledger-merchant-head/1", merchant_account_id, seq, …]` (decision 0143).',
  })
  merchant_account_id?: string | null;
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description: 'Heads are numbered from 1, each chained to the one before.',
  })
  seq!: number;
  @ApiProperty({
    type: String,
    enum: ['seal', 'purge'],
    description: '`seal`: new entries appended; `purge`: entries below `purged_below` deleted past retention.',
  })
  kind!: 'seal' | 'purge';
  @ApiProperty({ type: 'integer', minimum: 0 })
  tree_size!: number;
  @ApiProperty({ description: `RFC 9162 Merkle tree hash of the first tree_size entries (${BASE64_HASH}).` })
  root_hash!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: `Hash of the previous head's signed bytes (${BASE64_HASH}).`,
  })
  previous_hash!: string | null;
  @ApiProperty({ type: String, isArray: true, description: 'The perfect subtrees of the tree, largest first.' })
  frontier!: string[];
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Entries below this leaf were purged (LEDGER_RETENTION).' })
  purged_below!: number;
  @ApiProperty({
    type: String,
    isArray: true,
    description: 'The perfect subtrees of the purged leaves, largest first.',
  })
  retained!: string[];
  @ApiProperty({ description: 'When the head was signed (ISO 8601, UTC).' })
  signed_at!: string;
  @ApiProperty({ description: 'First 16 hex digits of the SHA-256 of the signing key’s SubjectPublicKeyInfo.' })
  key_id!: string;
  @ApiProperty({ description: 'ECDSA P-256 / SHA-256 over the head’s signed bytes, r || s, base64.' })
  signature!: string;

  static from(entity: LedgerHeadEntity): LedgerHeadResponse {
    return LedgerHeadResponse.of(headDocument(entity));
  }

  static of(head: LedgerHeadDocument): LedgerHeadResponse {
    return { type: 'vault-forward-ledger-head', ...head };
  }
}

class LedgerEntryResponse implements LedgerEntryDocument {
  @ApiProperty({ description: 'The entry id (a decimal number).' })
  id!: string;
  @ApiProperty()
  record_id!: string;
  @ApiProperty({ type: String, enum: LEDGER_ENTRY_KINDS })
  kind!: LedgerEntryKind;
  @ApiProperty()
  merchant_account_id!: string;
  @ApiProperty({ type: String, nullable: true })
  api_key_id!: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  config_id!: string | null;
  @ApiProperty({ type: String, nullable: true })
  method!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Scheme, host and port of the target.' })
  target_origin!: string | null;
  @ApiProperty({ type: String, format: 'uuid', isArray: true })
  payment_method_ids!: string[];
  @ApiProperty({ type: String, isArray: true, description: 'The cards’ fingerprints (never a number).' })
  fingerprints!: string[];
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  checkout_session_id!: string | null;
  @ApiProperty({ type: String, format: 'uuid', isArray: true, description: 'The stored secrets used.' })
  authentication_ids!: string[];
  @ApiProperty({ type: String, isArray: true, description: 'Placeholders filled, e.g. CARD_NUMBER_1.' })
  filled_fields!: string[];
  @ApiProperty({ type: 'integer', nullable: true })
  status!: number | null;
  @ApiProperty({ type: String, nullable: true })
  error_type!: string | null;
  @ApiProperty({ type: String, nullable: true, description: `Of the sealed bodies as first stored (${BASE64_HASH}).` })
  bodies_sha256!: string | null;
  @ApiProperty({ description: 'ISO 8601, UTC, microseconds.' })
  created_at!: string;
  @ApiProperty({ type: 'integer', nullable: true, description: 'The entry’s place in the merchant’s own tree.' })
  leaf_index!: number | null;
  @ApiProperty({ type: String, nullable: true, description: `RFC 9162 leaf hash of the entry (${BASE64_HASH}).` })
  leaf_hash!: string | null;
}

class LedgerInclusionProof {
  @ApiProperty({ type: LedgerEntryResponse })
  entry!: LedgerEntryResponse;
  @ApiProperty({ type: String, isArray: true, description: 'RFC 9162 §2.1.3 inclusion path, leaf to root (base64).' })
  inclusion_path!: string[];
}

export class LedgerRecordProofResponse {
  @ApiProperty({ type: String, enum: ['vault-forward-ledger-proof'] })
  type!: 'vault-forward-ledger-proof';
  @ApiProperty({ type: LedgerHeadResponse, description: 'The head the paths lead to.' })
  head!: LedgerHeadResponse;
  @ApiProperty({ type: LedgerInclusionProof, isArray: true, description: 'One per entry of the record.' })
  entries!: LedgerInclusionProof[];
}

export class LedgerConsistencyQuery {
  @ApiProperty({ type: 'integer', minimum: 1, description: 'The older head’s seq.' })
  @Transform(wholeNumber)
  @IsInt({ message: 'must be a head’s seq, a whole number from 1' })
  @Min(1, { message: 'must be a head’s seq, a whole number from 1' })
  from!: number;
  @ApiProperty({ type: 'integer', minimum: 1, description: 'The newer head’s seq.' })
  @Transform(wholeNumber)
  @IsInt({ message: 'must be a head’s seq, a whole number from 1' })
  @Min(1, { message: 'must be a head’s seq, a whole number from 1' })
  to!: number;
}

export class LedgerConsistencyResponse {
  @ApiProperty({ type: String, enum: ['vault-forward-ledger-consistency'] })
  type!: 'vault-forward-ledger-consistency';
  @ApiProperty({ type: LedgerHeadResponse })
  from!: LedgerHeadResponse;
  @ApiProperty({ type: LedgerHeadResponse })
  to!: LedgerHeadResponse;
  @ApiProperty({ type: String, isArray: true, description: 'RFC 9162 §2.1.4 consistency proof (base64).' })
  consistency_path!: string[];
}
