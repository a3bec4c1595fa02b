import type { KeyObject } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createInterface } from 'node:readline';
import { cliConfig, parse, print, UsageError, withServices, withToken } from './cli-support';
import type { LedgerEntryDocument, LedgerHeadDocument } from '../modules/forwarding/ledger/ledger-documents';
import type { ExpectedHead, LedgerFinding, LedgerLine } from '../modules/forwarding/ledger/ledger-verifier';

export const LEDGER_USAGE = `  ledger verify [--merchant ID] [--since ISO-TIME] [--expect-head HASH|FILE] [--keep-head FILE]
                                      recompute the disclosure ledger from the database and its signed heads;
                                      reports the first entry changed, removed or inserted, forward records
                                      without their entries and entries without their record (exit 1 if any);
                                      --expect-head: a head seen before must still be in the chain; --keep-head:
                                      the same with the head kept in FILE, which a clean run updates
  ledger verify --file FILE --public-key PEM-FILE [--expect-head HASH|FILE]
                                      the same on an export, offline, with the public key alone
  ledger export --out FILE|- [--merchant ID] [--since ISO-TIME]
                                      NDJSON a SIEM can take: every head, then the entries (others as leaf hashes)
  ledger public-key                   the PEM of the key that signs the heads
  ledger seal                         seal the entries written so far now, instead of at the next interval
  ledger key create --label NAME      make a non-extractable ECDSA P-256 key pair in the vault's PKCS#11 token
                                      (then LEDGER_PKCS11_KEY_LABEL=NAME); prints its public key`;

/** Rows per read: a verification or an export streams the ledger, never holds it whole. */
const PAGE = 5_000;

type LedgerRepository = import('../modules/forwarding/ledger/ledger.repository').LedgerRepository;

export async function ledgerCommand(sub: string | undefined, args: string[]): Promise<void> {
  if (sub === 'verify') return verify(args);
  if (sub === 'export') return exportLedger(args);
  if (sub === 'public-key') return publicKey();
  if (sub === 'seal') return seal();
  if (sub === 'key' && args[0] === 'create') return keyCreate(args.slice(1));
  throw new UsageError(`unknown command "ledger ${sub ?? ''}"`);
}

function filters(values: { merchant?: string; since?: string }): { merchant?: string; since?: Date } {
  const since = values.since === undefined ? undefined : new Date(values.since);
  if (since && Number.isNaN(since.getTime())) throw new UsageError('--since must be an ISO 8601 time');
  return { merchant: values.merchant, since };
}

async function verify(args: string[]): Promise<void> {
  const { values } = parse(args, {
    merchant: { type: 'string' },
    since: { type: 'string' },
    file: { type: 'string' },
    'public-key': { type: 'string' },
    'expect-head': { type: 'string' },
    'keep-head': { type: 'string' },
  });
  const options = filters(values);
  const keep = values['keep-head'];
  // The head kept stands for the whole ledger verified clean: never after a run that looked at part of it.
  if (keep !== undefined && (values.file ?? values.merchant ?? values.since) !== undefined)
    throw new UsageError('--keep-head verifies the whole database: not with --file, --merchant or --since');
  const expected = [values['expect-head'], keep !== undefined && existsSync(keep) ? keep : undefined]
    .filter((value): value is string => value !== undefined)
    .map(expectedHead);
  const [verifier, { headSignatureValid }] = await Promise.all([
    import('../modules/forwarding/ledger/ledger-verifier'),
    import('../modules/forwarding/ledger/ledger-documents'),
  ]);
  const check = (heads: LedgerHeadDocument[], key: KeyObject | string) =>
    expected.map((head) => {
      if (!('hash' in head) && !headSignatureValid(head, key))
        throw new UsageError('the expected head’s signature does not verify with the ledger’s public key');
      return verifier.expectedHeadFinding(heads, head);
    });
  let result: Awaited<ReturnType<typeof verifier.verifyLedger>>;
  let newest: LedgerHeadDocument | undefined;
  if (values.file !== undefined) {
    if (!values['public-key']) throw new UsageError('ledger verify --file needs --public-key');
    const key = readFileSync(values['public-key'], 'utf8');
    const { heads, lines } = await readExport(values.file);
    result = await verifier.verifyLedger(heads, lines, key, options);
    result = verifier.withFindings(result, present(check(heads, key)));
  } else {
    result = await withRepository(async (ledger, key) => {
      const heads = await allHeads(ledger);
      newest = heads[heads.length - 1];
      const shared = await verifier.verifyLedger(heads, entries(ledger, heads), key.publicKey, options);
      const { findings, merchantHeads } = await merchantTrees(ledger, key.publicKey, options);
      findings.push(...(await completeness(ledger, heads, options)));
      findings.push(...present(check([...heads, ...merchantHeads], key.publicKey)));
      return verifier.withFindings(shared, findings);
    });
  }
  print(result);
  if (!result.ok) process.exitCode = 1;
  else if (keep !== undefined && newest) keepHead(keep, newest);
}

const present = <T>(values: Array<T | null>): T[] => values.filter((value): value is T => value !== null);

/**
 * A head seen before, as --expect-head or --keep-head give it: a file holding its document (as the API, an export
 * line or --keep-head has it), or its hash (base64 SHA-256 of its signed bytes, as `newest_head.hash` prints it).
 */
function expectedHead(value: string): ExpectedHead {
  if (!existsSync(value)) {
    if (/^[A-Za-z0-9+/]{43}=$/.test(value)) return { hash: value };
    throw new UsageError('--expect-head must be a head’s hash (base64 SHA-256) or a file holding a head');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(value, 'utf8'));
  } catch {
    throw new UsageError(`${value} does not hold a head (JSON)`);
  }
  const head = parsed as Partial<LedgerHeadDocument> & { type?: string };
  if (typeof head?.seq !== 'number' || typeof head.signature !== 'string' || !Array.isArray(head.frontier))
    throw new UsageError(`${value} does not hold a head (seq, frontier, signature…)`);
  const { type: _type, ...document } = head;
  return document as LedgerHeadDocument;
}

/** Written to a file beside it first, then moved: a crash never leaves half a head for the next run to read. */
function keepHead(file: string, head: LedgerHeadDocument): void {
  const next = `${file}.next`;
  writeFileSync(next, `${JSON.stringify({ type: 'head', ...head })}\n`, { mode: 0o600 });
  renameSync(next, file);
}

/**
 * Each merchant's own tree (decision 0143) verified as the shared one is: its heads' signatures and chain, its
 * roots from its entries' leaves. An entry's content is checked once, in the shared tree.
 */
async function merchantTrees(
  ledger: LedgerRepository,
  key: KeyObject,
  options: { merchant?: string; since?: Date },
): Promise<{ findings: LedgerFinding[]; merchantHeads: LedgerHeadDocument[] }> {
  const { verifyLedger } = await import('../modules/forwarding/ledger/ledger-verifier');
  const findings: LedgerFinding[] = [];
  const merchantHeads: LedgerHeadDocument[] = [];
  for (const merchant of await ledger.merchantsWithTrees()) {
    if (options.merchant && merchant !== options.merchant) continue;
    const heads = await allHeads(ledger, merchant);
    merchantHeads.push(...heads);
    const own = await verifyLedger(heads, sealed(ledger, treeSize(heads), merchant), key, { since: options.since });
    for (const finding of own.findings)
      if (finding.problem !== 'entry-changed')
        findings.push({
          ...finding,
          merchant_account_id: merchant,
          message: `merchant ${merchant}: ${finding.message}`,
        });
  }
  return { findings, merchantHeads };
}

/** Most rows of each completeness read listed: past that, the report says there are more. */
const LISTED = 1_000;

/**
 * What the heads and leaves cannot show (decision 0143): rows the sealer never writes, forward records without the
 * entry they must have, entries without their record. Records are expected from the first head that covers the
 * kept entries on (before it: records from before the ledger, or whose entries were purged); with no head at all,
 * from the start.
 */
async function completeness(
  ledger: LedgerRepository,
  heads: LedgerHeadDocument[],
  options: { merchant?: string; since?: Date },
): Promise<LedgerFinding[]> {
  const latest = heads[heads.length - 1];
  const first = latest && (heads.find((head) => head.tree_size > latest.purged_below) ?? latest);
  const start = first ? new Date(first.signed_at) : null;
  const from = options.since && (!start || options.since > start) ? options.since : start;
  const merchant = options.merchant ?? null;
  const [impossible, records, orphans] = await Promise.all([
    ledger.impossibleEntries(LISTED),
    ledger.recordsWithoutEntry(from, merchant, LISTED),
    ledger.entriesWithoutRecord(options.since ?? null, merchant, LISTED),
  ]);
  const more = (rows: unknown[]) => (rows.length === LISTED ? ` (and more: the first ${LISTED} are listed)` : '');
  return [
    ...impossible
      .filter((e) => !merchant || e.merchant_account_id === merchant)
      .map((e): LedgerFinding => ({
        problem: 'entry-impossible',
        message:
          `entry ${e.id} (forward ${e.record_id}): leaf ${e.leaf_index}, leaf hash ${e.leaf_hash ? 'set' : 'none'}, ` +
          `merchant leaf ${e.merchant_leaf_index}: values the sealer never writes${more(impossible)}`,
        leaf_index: e.leaf_index ?? undefined,
        entry_id: e.id,
        record_id: e.record_id,
        merchant_account_id: e.merchant_account_id,
      })),
    ...records.map((r): LedgerFinding => ({
      problem: 'record-without-entry',
      message: `forward ${r.record_id} has no ${r.kind} entry in the ledger${more(records)}`,
      record_id: r.record_id,
      merchant_account_id: r.merchant_account_id,
    })),
    ...orphans.map((e): LedgerFinding => ({
      problem: 'entry-without-record',
      message: `entry ${e.entry_id} (${e.kind}) names forward ${e.record_id}, which is not on record${more(orphans)}`,
      entry_id: e.entry_id!,
      record_id: e.record_id,
      merchant_account_id: e.merchant_account_id,
      leaf_index: e.leaf_index ?? undefined,
    })),
  ];
}

async function exportLedger(args: string[]): Promise<void> {
  const { values } = parse(args, { out: { type: 'string' }, merchant: { type: 'string' }, since: { type: 'string' } });
  if (!values.out) throw new UsageError('ledger export needs --out FILE (or - for stdout)');
  const { merchant, since } = filters(values);
  const fd = values.out === '-' ? 1 : openSync(values.out, 'wx', 0o600);
  const write = (line: object) => writeSync(fd, `${JSON.stringify(line)}\n`);
  try {
    const counts = await withRepository(async (ledger) => {
      const heads = await allHeads(ledger);
      for (const head of heads) write({ type: 'head', ...head });
      let entries = 0;
      let leaves = 0;
      for await (const entry of sealed(ledger, treeSize(heads))) {
        // Another merchant's entry, or one before --since, goes as its leaf hash alone: the roots still check.
        const whole =
          (!merchant || entry.merchant_account_id === merchant) && (!since || entry.created_at >= since.toISOString());
        if (whole) entries++;
        else leaves++;
        write(
          whole
            ? { type: 'entry', ...entry }
            : { type: 'leaf', leaf_index: entry.leaf_index, leaf_hash: entry.leaf_hash },
        );
      }
      return { heads: heads.length, entries, leaves };
    });
    if (fd !== 1) print({ file: values.out, ...counts });
  } finally {
    if (fd !== 1) closeSync(fd);
  }
}

/** The key needs the configuration only: no database is opened for it. */
async function publicKey(): Promise<void> {
  const [config, { LedgerKey }] = await Promise.all([cliConfig(), import('../modules/forwarding/ledger/ledger-key')]);
  const key = LedgerKey.fromConfig(config);
  print({ key_id: key.keyId, public_key: key.publicKeyPem() });
}

async function seal(): Promise<void> {
  const [{ LedgerSealer }, { LedgerRepository }, { APP_CONFIG }, { CLOCK }] = await Promise.all([
    import('../modules/forwarding/ledger/ledger-sealer'),
    import('../modules/forwarding/ledger/ledger.repository'),
    import('../platform/config/config.module'),
    import('../platform/time/clock'),
  ]);
  const head = await withServices((app) =>
    new LedgerSealer(app.get(LedgerRepository), app.get(APP_CONFIG), app.get(CLOCK)).sealAll(),
  );
  print({ head });
}

async function keyCreate(args: string[]): Promise<void> {
  const { values } = parse(args, { label: { type: 'string' } });
  if (!values.label) throw new UsageError('ledger key create needs --label NAME');
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(values.label))
    throw new UsageError('--label must be 1–64 letters, digits, . _ or -');
  const [{ Pkcs11SigningKey }, { ledgerKeyId }] = await Promise.all([
    import('../modules/vault/pkcs11-signing-key'),
    import('../modules/forwarding/ledger/ledger-documents'),
  ]);
  const { publicKey, tokenLabel } = await withToken((token, label) => ({
    publicKey: Pkcs11SigningKey.create(token, values.label!),
    tokenLabel: label,
  }));
  print({
    label: values.label,
    token_label: tokenLabel,
    key_type: 'EC P-256',
    extractable: false,
    sensitive: true,
    key_id: ledgerKeyId(publicKey),
    public_key: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  });
}

async function withRepository<T>(
  run: (ledger: LedgerRepository, key: import('../modules/forwarding/ledger/ledger-key').LedgerKey) => Promise<T>,
): Promise<T> {
  const [{ LedgerRepository }, { LedgerKey }, { APP_CONFIG }] = await Promise.all([
    import('../modules/forwarding/ledger/ledger.repository'),
    import('../modules/forwarding/ledger/ledger-key'),
    import('../platform/config/config.module'),
  ]);
  return withServices((app) => run(app.get(LedgerRepository), LedgerKey.fromConfig(app.get(APP_CONFIG))));
}

/** The shared tree's heads, or with `merchant` that merchant's own, in seq order. */
async function allHeads(ledger: LedgerRepository, merchant: string | null = null): Promise<LedgerHeadDocument[]> {
  const heads: LedgerHeadDocument[] = [];
  for (;;) {
    const page = await ledger.headsAfter(heads[heads.length - 1]?.seq ?? 0, PAGE, merchant);
    heads.push(...page);
    if (page.length < PAGE) return heads;
  }
}

const treeSize = (heads: LedgerHeadDocument[]) => heads[heads.length - 1]?.tree_size ?? 0;

/**
 * The entries the heads cover (a seal running meanwhile adds more), in leaf order, streamed; with `merchant`, that
 * merchant's in the order of its own tree, each by its place there.
 */
async function* sealed(
  ledger: LedgerRepository,
  below: number,
  merchant: string | null = null,
): AsyncIterable<LedgerEntryDocument> {
  let after = -1;
  for (;;) {
    const page = await ledger.sealedEntries(after, PAGE, below, merchant);
    if (merchant === null) yield* page;
    else yield* page.map((entry) => ({ ...entry, leaf_index: entry.merchant_leaf_index ?? null }));
    if (page.length < PAGE) return;
    after = (merchant === null ? page[page.length - 1].leaf_index : page[page.length - 1].merchant_leaf_index)!;
  }
}

/**
 * What `ledger verify` reads: the entries the heads it read cover, then any entry with a leaf index no head covers
 * even now (the latest head read again once the others are through): only the sealer sets one, with its head, so
 * such a row was put there by hand. Entries sealed while the verification ran are left to the next one.
 */
async function* entries(ledger: LedgerRepository, heads: LedgerHeadDocument[]): AsyncIterable<LedgerLine> {
  yield* sealed(ledger, treeSize(heads));
  const latest = (await ledger.latestHead())?.tree_size ?? 0;
  yield* await ledger.sealedEntries(latest - 1, PAGE);
}

/** An export's heads (they come first) and its entry and leaf lines, streamed. */
async function readExport(file: string): Promise<{ heads: LedgerHeadDocument[]; lines: AsyncIterable<LedgerLine> }> {
  const reader = createInterface({ input: createReadStream(file), crlfDelay: Infinity })[Symbol.asyncIterator]();
  const heads: LedgerHeadDocument[] = [];
  let first: LedgerLine | undefined;
  for (;;) {
    const { value, done } = await reader.next();
    if (done) break;
    const line = parseLine(value);
    if (line.type === 'head') {
      heads.push(line.document as LedgerHeadDocument);
      continue;
    }
    first = line.document as LedgerLine;
    break;
  }
  async function* rest(): AsyncIterable<LedgerLine> {
    if (first) yield first;
    for (;;) {
      const { value, done } = await reader.next();
      if (done) return;
      const line = parseLine(value);
      if (line.type === 'head') throw new Error('ledger export: a head after the entries');
      yield line.document as LedgerLine;
    }
  }
  return { heads, lines: rest() };
}

function parseLine(text: string): { type: string; document: object } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`ledger export: a line is not JSON: ${text.slice(0, 40)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || !('type' in parsed))
    throw new Error('ledger export: a line without its type');
  const { type, ...document } = parsed as { type: string };
  if (!['head', 'entry', 'leaf'].includes(type)) throw new Error(`ledger export: unknown line type ${type}`);
  return { type, document };
}
