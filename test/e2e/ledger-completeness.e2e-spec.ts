import { verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { http } from '../support/http';
import { headBytesOf, leafOf, rootFromInclusionPath } from '../support/ledger-spec';
import { LedgerSetup, startLedgerSetup } from '../support/ledger-setup';
import { startTestApp, TestApp } from '../support/test-app';

/*
 * Issue 47, item 2 (decision 0143): the ledger proves completeness, not only integrity. Each merchant reads its own
 * tree, never the count of the others' disclosures. An attacker with database access deletes, truncates and
 * inserts; `ledger verify` reports each (what is gone as well as what changed), the schema refuses the values the
 * sealer never writes, and a proof is a problem answer, never a 500, whatever the rows hold.
 */

interface Merchant {
  id: string;
  token: string;
  card: string;
  records: string[];
}

describe('The disclosure ledger proves completeness: per-merchant heads, what is gone reported, proofs never 500', () => {
  let setup: LedgerSetup;
  let app: TestApp;
  const merchants: Merchant[] = [];

  async function forward(m: Merchant): Promise<string> {
    const sent = await setup.forward(app, m.token, m.card, '{"number":"{{ CARD_NUMBER_1 }}"}');
    expect(sent.status).toBe(200);
    const id = sent.headers.get('x-vault-forward-request-id')!;
    m.records.push(id);
    return id;
  }

  const proofOf = (m: Merchant, id: string) => setup.proof(app, m.token, id);
  /** Where `ledger verify --keep-head` keeps the newest head it verified. */
  const kept = () => join(setup.dir, 'last-head.json');

  const verified = async (...args: string[]) => {
    const run = await setup.cli('ledger', 'verify', ...args);
    try {
      return { code: run.code, ...JSON.parse(run.stdout) };
    } catch {
      throw new Error(`ledger verify answered no JSON (exit ${run.code}): ${run.stderr}`);
    }
  };

  /** Rows as they are, to put back exactly (ids and all) once a check is done. */
  const saved = async (table: string, where: string, values: unknown[]) =>
    (await setup.direct.query(`SELECT to_jsonb(t) AS row FROM ${table} t WHERE ${where}`, values)).rows.map(
      (r) => r.row,
    );
  const restore = async (table: string, rows: unknown[]) => {
    for (const row of rows)
      await setup.direct.query(`INSERT INTO ${table} SELECT * FROM jsonb_populate_record(NULL::${table}, $1)`, [row]);
  };

  beforeAll(async () => {
    setup = await startLedgerSetup('ledger_complete', { FORWARD_INSECURE_HOSTS: '127.0.0.1' });
    app = await startTestApp({ env: setup.env });
    for (const name of ['shop a', 'shop b']) {
      const { id, token, cards } = await setup.merchant(app, name, 1);
      merchants.push({ id, token, card: cards[0], records: [] });
    }
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await setup?.close();
  }, 60_000);

  it('gives each merchant heads and proofs of its own tree: the others’ disclosures change nothing it can read', async () => {
    const [a, b] = merchants;
    const mine = await proofOf(b, await forward(b));
    const heads = (await http(app.url, '/vault-forward/ledger/heads', { token: b.token })).body.items;
    for (let i = 0; i < 3; i++) await proofOf(a, await forward(a));

    // B's tree holds B's two entries, at its own leaves 0 and 1, under heads signed for B alone.
    expect(mine.head).toMatchObject({ merchant_account_id: b.id, tree_size: 2 });
    expect(mine.entries.map((e: any) => e.entry.leaf_index)).toEqual([0, 1]);
    const signature = Buffer.from(mine.head.signature, 'base64');
    expect(
      verify('sha256', headBytesOf(mine.head), { key: setup.publicKey, dsaEncoding: 'ieee-p1363' }, signature),
    ).toBe(true);
    for (const { entry, inclusion_path } of mine.entries) {
      const path = inclusion_path.map((p: string) => Buffer.from(p, 'base64'));
      const root = rootFromInclusionPath(entry.leaf_index, mine.head.tree_size, leafOf(entry), path);
      expect(root?.toString('base64')).toBe(mine.head.root_hash);
    }
    // Six entries of A's later, B reads exactly what it read before: no size, head or place moved.
    expect((await http(app.url, '/vault-forward/ledger/heads', { token: b.token })).body.items).toEqual(heads);
    expect((await proofOf(b, b.records[0])).head).toEqual(mine.head);
    expect(heads.every((h: any) => h.merchant_account_id === b.id && h.tree_size <= 2)).toBe(true);
    const theirs = await proofOf(a, a.records[2]);
    expect(theirs.head).toMatchObject({ merchant_account_id: a.id, tree_size: 6 });
  });

  it('refuses impossible values in the schema, and answers a problem, never a 500, when they are forced in', async () => {
    const [a] = merchants;
    const insert = (record: string, leaf: number) =>
      setup.direct.query(
        `INSERT INTO vault_forward_ledger_entries (record_id, kind, merchant_account_id, payment_method_ids, fingerprints,
           authentication_ids, filled_fields, leaf_index, leaf_hash)
         VALUES ($1, 'disclosure', $2, '{}', '{}', '{}', '{}', $3, 'AAAA') RETURNING id::text`,
        [record, a.id, leaf],
      );
    await expect(insert('forged-negative', -1)).rejects.toMatchObject({ code: '23514' });
    await expect(insert('forged-twice', 0)).rejects.toMatchObject({ code: '23505' });

    // Forced in past the schema (its constraints dropped, as only an attacker with the owner's rights can).
    await setup.direct.query(
      'ALTER TABLE vault_forward_ledger_entries DROP CONSTRAINT vault_forward_ledger_entries_leaf_check',
    );
    await setup.direct.query(
      'ALTER TABLE vault_forward_ledger_entries DROP CONSTRAINT vault_forward_ledger_entries_leaf_index_key',
    );
    const [negative] = (await insert('forged-negative', -1)).rows;
    const [twice] = (await insert('forged-twice', 0)).rows;
    const proof = await http(app.url, '/vault-forward/requests/forged-negative/proof', { token: a.token });
    expect([proof.status, proof.body.code]).toEqual([409, 'ledger-inconsistent']);
    const report = await verified();
    expect(report).toMatchObject({ code: 1, ok: false });
    expect(report.findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ problem: 'entry-impossible', entry_id: negative.id, leaf_index: -1 }),
        expect.objectContaining({ problem: 'entry-impossible', entry_id: twice.id, leaf_index: 0 }),
        expect.objectContaining({ problem: 'entry-without-record', entry_id: negative.id }),
      ]),
    );
    await setup.direct.query(`DELETE FROM vault_forward_ledger_entries WHERE record_id LIKE 'forged-%'`);
    await setup.direct.query(`ALTER TABLE vault_forward_ledger_entries
      ADD CONSTRAINT vault_forward_ledger_entries_leaf_check CHECK (leaf_index >= 0 AND (leaf_index IS NULL) = (leaf_hash IS NULL)),
      ADD CONSTRAINT vault_forward_ledger_entries_leaf_index_key UNIQUE (leaf_index)`);

    // A leaf of A's tree gone: a proof of another of A's records is refused, not made from a tree with a hole.
    const gone = await saved('vault_forward_ledger_entries', `record_id = $1 AND kind = 'outcome'`, [a.records[0]]);
    await setup.direct.query(`DELETE FROM vault_forward_ledger_entries WHERE record_id = $1 AND kind = 'outcome'`, [
      a.records[0],
    ]);
    const holed = await http(app.url, `/vault-forward/requests/${a.records[1]}/proof`, { token: a.token });
    expect([holed.status, holed.body.code]).toEqual([409, 'ledger-inconsistent']);
    await restore('vault_forward_ledger_entries', gone);
    expect((await http(app.url, `/vault-forward/requests/${a.records[1]}/proof`, { token: a.token })).status).toBe(200);
  });

  it('reports records without their entries, entries without their record, and a chain shorter than one seen', async () => {
    const [a, b] = merchants;
    // A clean run keeps its newest head; forwards and seals going on meanwhile change nothing in its answer.
    const [clean] = await Promise.all([verified('--keep-head', kept()), forward(a), forward(b)]);
    expect(clean).toMatchObject({ code: 0, ok: true, findings: [] });
    expect(JSON.parse(readFileSync(kept(), 'utf8'))).toMatchObject({ seq: clean.newest_head.seq });
    await proofOf(a, a.records[a.records.length - 1]);
    await proofOf(b, b.records[b.records.length - 1]);
    const seen = await verified('--keep-head', kept());
    expect(seen).toMatchObject({ code: 0, ok: true });

    // A record's entries deleted; another record deleted, its entries left.
    const [lost, orphaned] = [a.records[1], b.records[0]];
    const entries = await saved('vault_forward_ledger_entries', 'record_id = $1', [lost]);
    const record = await saved('vault_forward_requests', 'id = $1', [orphaned]);
    await setup.direct.query('DELETE FROM vault_forward_ledger_entries WHERE record_id = $1', [lost]);
    await setup.direct.query('DELETE FROM vault_forward_requests WHERE id = $1', [orphaned]);
    const missing = await verified();
    expect(missing.findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ problem: 'record-without-entry', record_id: lost, merchant_account_id: a.id }),
        expect.objectContaining({ problem: 'entry-without-record', record_id: orphaned, merchant_account_id: b.id }),
      ]),
    );
    await restore('vault_forward_ledger_entries', entries);
    await restore('vault_forward_requests', record);

    // The newest head deleted with its entries, and the merchants' heads over them: a shorter chain that verifies
    // on its own, but for the records left without their entries and the head the last run kept.
    const newest = seen.newest_head;
    await setup.direct.query('BEGIN');
    const { rows: cut } = await setup.direct.query<{ record_id: string }>(
      `DELETE FROM vault_forward_ledger_entries
        WHERE leaf_index >= (SELECT tree_size FROM vault_forward_ledger_heads WHERE merchant_account_id IS NULL
                              AND seq = $1 - 1)
        RETURNING record_id`,
      [newest.seq],
    );
    await setup.direct.query(
      `DELETE FROM vault_forward_ledger_heads h WHERE h.merchant_account_id IS NULL AND seq = $1
          OR h.merchant_account_id IS NOT NULL AND h.tree_size > (SELECT count(*) FROM vault_forward_ledger_entries e
               WHERE e.merchant_account_id = h.merchant_account_id AND e.merchant_leaf_index IS NOT NULL)`,
      [newest.seq],
    );
    await setup.direct.query('COMMIT');
    expect(cut.length).toBeGreaterThan(0);
    const shorter = await verified('--keep-head', kept());
    expect(shorter).toMatchObject({ code: 1, ok: false });
    expect(shorter.findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ problem: 'head-missing', seq: newest.seq }),
        ...cut.map((c) => expect.objectContaining({ problem: 'record-without-entry', record_id: c.record_id })),
      ]),
    );
    const byHash = await verified('--expect-head', newest.hash);
    expect(byHash.findings).toEqual(expect.arrayContaining([expect.objectContaining({ problem: 'head-missing' })]));

    // Both tables emptied: no head, no entry, and every record reported.
    await setup.direct.query('TRUNCATE vault_forward_ledger_entries, vault_forward_ledger_heads');
    const wiped = await verified('--keep-head', kept());
    expect(wiped).toMatchObject({ code: 1, ok: false, heads: 0 });
    expect(wiped.findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ problem: 'head-missing', seq: newest.seq }),
        ...[...a.records, ...b.records].map((id) =>
          expect.objectContaining({ problem: 'record-without-entry', record_id: id }),
        ),
      ]),
    );
    // The head kept is the last one verified clean: a failed run never replaces it.
    expect(JSON.parse(readFileSync(kept(), 'utf8'))).toMatchObject({ seq: newest.seq });
  });
});
