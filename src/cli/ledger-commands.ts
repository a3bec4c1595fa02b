import { closeSync, createReadStream, openSync, readFileSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { cliConfig, parse, print, UsageError, withServices, withToken } from './cli-support';
import type { LedgerEntryDocument, LedgerHeadDocument } from '../modules/forwarding/ledger/ledger-documents';
import type { LedgerLine } from '../modules/forwarding/ledger/ledger-verifier';

export const LEDGER_USAGE = `  ledger verify [--merchant ID] [--since ISO-TIME]
                                      recompute the disclosure ledger from the database and its signed heads;
                                      reports the first entry changed, removed or inserted (exit 1 if any)
  ledger verify --file FILE --public-key PEM-FILE
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
  });
  const options = filters(values);
  const { verifyLedger } = await import('../modules/forwarding/ledger/ledger-verifier');
  let result: Awaited<ReturnType<typeof verifyLedger>>;
  if (values.file !== undefined) {
    if (!values['public-key']) throw new UsageError('ledger verify --file needs --public-key');
    const key = readFileSync(values['public-key'], 'utf8');
    const { heads, lines } = await readExport(values.file);
    result = await verifyLedger(heads, lines, key, options);
  } else {
    result = await withRepository(async (ledger, key) => {
      const heads = await allHeads(ledger);
      return verifyLedger(heads, entries(ledger, heads), key.publicKey, options);
    });
  }
  print(result);
  if (!result.ok) process.exitCode = 1;
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

async function allHeads(ledger: LedgerRepository): Promise<LedgerHeadDocument[]> {
  const heads: LedgerHeadDocument[] = [];
  for (;;) {
    const page = await ledger.headsAfter(heads[heads.length - 1]?.seq ?? 0, PAGE);
    heads.push(...page);
    if (page.length < PAGE) return heads;
  }
}

const treeSize = (heads: LedgerHeadDocument[]) => heads[heads.length - 1]?.tree_size ?? 0;

/** The entries the heads cover (a seal running meanwhile adds more), in leaf order, streamed. */
async function* sealed(ledger: LedgerRepository, below: number): AsyncIterable<LedgerEntryDocument> {
  let after = -1;
  for (;;) {
    const page = await ledger.sealedEntries(after, PAGE, below);
    yield* page;
    if (page.length < PAGE) return;
    after = page[page.length - 1].leaf_index!;
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
