import { verify } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { endedJob, queuedForwardEnv, startWorker, stopQueuedSetup, WorkerProcess } from '../support/forward-jobs';
import { http, HttpResult } from '../support/http';
import { LedgerSetup, startLedgerSetup } from '../support/ledger-setup';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';
import { headBytesOf, leafOf, rootFromInclusionPath } from '../support/ledger-spec';
import { LedgerSealer } from '../../src/modules/forwarding/ledger/ledger-sealer';

/*
 * Issue 38: the disclosure ledger. Forwards, sent now through two API processes and queued through a worker, each
 * get ledger entries; the sealer signs tree heads; `ledger verify` passes, then reports each tampering with the
 * entry or head it concerns; an export verifies offline with the public key alone. The inclusion proofs are
 * checked here by a verifier written from RFC 9162 §2.1.3.2, not src/'s.
 */

describe('The disclosure ledger: entries with every disclosure, signed heads, proofs and verification', () => {
  let setup: LedgerSetup;
  let a: TestApp;
  let b: TestApp;
  let worker: WorkerProcess;
  let token: string;
  let cards: string[];
  const records: string[] = [];

  function forward(app: TestApp, card: string, headers: Record<string, string> = {}): Promise<HttpResult> {
    const body = '{"number":"{{ CARD_NUMBER_1 }}","expiry":"{{ CARD_EXPIRATION_DATE_1 }}"}';
    return setup.forward(app, token, card, body, headers);
  }

  /** The record's proof once a head covers its entries. */
  const proofOf = (id: string) => setup.proof(a, token, id);

  beforeAll(async () => {
    setup = await startLedgerSetup('ledger', queuedForwardEnv('test-ledger'));
    setup.target.script('/pay', [{ status: 200, body: '{"ok":true}' }]);
    a = await startTestApp({ env: setup.env });
    b = await startTestApp({ env: setup.env });
    worker = await startWorker(setup.env);
    ({ token, cards } = await setup.merchant(a, 'ledger target', 3));
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    await stopQueuedSetup(setup && { env: setup.env, worker, t: a });
    await setup?.close();
  }, 60_000);

  it('records each disclosure, sent now on two API processes or queued, and proves it against a signed head', async () => {
    for (const [i, app] of [a, b, a, b].entries()) {
      const sent = await forward(app, cards[i % cards.length]);
      expect(sent.status).toBe(200);
      records.push(sent.headers.get('x-vault-forward-request-id')!);
    }
    const queued = await forward(a, cards[0], { prefer: 'respond-async' });
    expect(queued.status).toBe(202);
    const job = await endedJob(a.url, token, queued.body.id);
    expect(job.body.status).toBe('succeeded');
    const { rows } = await setup.direct.query<{ id: string }>(
      `SELECT id FROM vault_forward_requests WHERE id <> ALL($1) AND merchant_account_id = $2`,
      [records, (await http(a.url, `/vault-forward/requests/${records[0]}`, { token })).body.merchant_account_id],
    );
    expect(rows).toHaveLength(1); // the queued attempt's own record
    records.push(rows[0].id);

    for (const id of records) {
      const proof = await proofOf(id);
      const head = proof.head;
      expect(
        verify(
          'sha256',
          headBytesOf(head),
          { key: setup.publicKey, dsaEncoding: 'ieee-p1363' },
          Buffer.from(head.signature, 'base64'),
        ),
      ).toBe(true);
      expect(proof.entries.map((e: any) => e.entry.kind)).toEqual(['disclosure', 'outcome']);
      for (const { entry, inclusion_path } of proof.entries) {
        // Metadata only: the card by id and fingerprint, the fields by name, the target by origin.
        expect(entry).toMatchObject({
          record_id: id,
          target_origin: setup.target.url,
          method: 'POST',
          filled_fields: ['CARD_NUMBER_1', 'CARD_EXPIRATION_DATE_1'],
        });
        expect(entry.fingerprints).toHaveLength(1);
        expect(entry.api_key_id).toEqual(expect.any(String));
        const leaf = leafOf(entry);
        expect(leaf.toString('base64')).toBe(entry.leaf_hash);
        const root = rootFromInclusionPath(
          entry.leaf_index,
          head.tree_size,
          leaf,
          inclusion_path.map((p: string) => Buffer.from(p, 'base64')),
        );
        expect(root?.toString('base64')).toBe(head.root_hash);
      }
      expect(proof.entries[1].entry.status).toBe(200);
    }
    // No card number anywhere in the ledger's rows.
    const raw = await setup.direct.query('SELECT * FROM vault_forward_ledger_entries');
    expect(JSON.stringify(raw.rows)).not.toMatch(/\d{13,19}/);
  });

  it('heads chain, page newest first, and prove consistency', async () => {
    const page = await http(a.url, '/vault-forward/ledger/heads?limit=2', { token });
    expect(page.status).toBe(200);
    const [newest, older] = page.body.items;
    expect(newest.seq).toBeGreaterThan(older.seq);
    const proof = await http(a.url, `/vault-forward/ledger/consistency?from=${older.seq}&to=${newest.seq}`, { token });
    expect(proof.status).toBe(200);
    expect(proof.body.to.root_hash).toBe(newest.root_hash);
    const wrong = await http(a.url, `/vault-forward/ledger/consistency?from=${newest.seq}&to=${older.seq}`, { token });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('ledger-heads-out-of-order');
  });

  it('purges past retention with a signed purge head, and later proofs still verify against the kept subtrees', async () => {
    const { rows } = await setup.direct.query<{ at: Date }>(
      'SELECT created_at AS at FROM vault_forward_ledger_entries WHERE leaf_index = 4',
    );
    // Null while another process's seal holds the sealer's lock (every 100 ms here): tried until it runs.
    const head = await waitFor(() => a.get(LedgerSealer).purgeExpired(rows[0].at), {
      timeoutMs: 20_000,
      what: 'the purge',
    });
    expect(head).toMatchObject({ kind: 'purge' });
    expect(head.purged_below).toBeGreaterThan(1);
    expect(head.purged_below).toBeLessThanOrEqual(4);
    const left = await setup.direct.query('SELECT 1 FROM vault_forward_ledger_entries WHERE leaf_index < $1', [
      head.purged_below,
    ]);
    expect(left.rows).toEqual([]);
    // The first record's two entries are gone; the last one's still prove against the newest head.
    const purged = await http(a.url, `/vault-forward/requests/${records[0]}/proof`, { token });
    expect(purged.body.code).toBe('ledger-entry-not-found');
    const proof = await proofOf(records[records.length - 1]);
    // The merchant's own tree (decision 0143): its only merchant's, so purged at the same leaf under its own head.
    expect(proof.head).toMatchObject({ kind: 'purge', purged_below: head.purged_below });
    for (const { entry, inclusion_path } of proof.entries) {
      const path = inclusion_path.map((p: string) => Buffer.from(p, 'base64'));
      const root = rootFromInclusionPath(entry.leaf_index, proof.head.tree_size, leafOf(entry), path);
      expect(root?.toString('base64')).toBe(proof.head.root_hash);
    }
  });

  it('verifies from the database and offline from an export, and reports each tampering with what it concerns', async () => {
    const verified = await setup.cli('ledger', 'verify');
    expect(verified).toMatchObject({ code: 0 });
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, findings: [] });

    const exported = join(setup.dir, 'ledger.ndjson');
    expect((await setup.cli('ledger', 'export', '--out', exported)).code).toBe(0);
    const key = JSON.parse((await setup.cli('ledger', 'public-key')).stdout);
    const keyFile = join(setup.dir, 'ledger.pub.pem');
    writeFileSync(keyFile, key.public_key);
    const offline = await setup.cli('ledger', 'verify', '--file', exported, '--public-key', keyFile);
    expect(JSON.parse(offline.stdout)).toMatchObject({ ok: true });
    // The export tampered with: one entry's target changed.
    const lines = readFileSync(exported, 'utf8').trim().split('\n');
    const at = lines.findIndex((line) => line.includes('"type":"entry"'));
    const entry = JSON.parse(lines[at]);
    lines[at] = JSON.stringify({ ...entry, target_origin: 'https://attacker.example' });
    writeFileSync(exported, `${lines.join('\n')}\n`);
    const tamperedFile = await setup.cli('ledger', 'verify', '--file', exported, '--public-key', keyFile);
    expect(tamperedFile.code).toBe(1);
    expect(JSON.parse(tamperedFile.stdout).first).toMatchObject({ problem: 'entry-changed', entry_id: entry.id });

    // The database tampered with: a target changed, an entry deleted, a row inserted, two heads swapped.
    const { rows: sealed } = await setup.direct.query<{ id: string; leaf_index: string; record_id: string }>(
      'SELECT id::text, leaf_index::text, record_id FROM vault_forward_ledger_entries WHERE leaf_index IS NOT NULL ORDER BY leaf_index',
    );
    const [changed, removed] = [sealed[1], sealed[3]];
    await setup.direct.query(
      `UPDATE vault_forward_ledger_entries SET target_origin = 'https://attacker.example' WHERE id = $1`,
      [changed.id],
    );
    await setup.direct.query('DELETE FROM vault_forward_ledger_entries WHERE id = $1', [removed.id]);
    const { rows: inserted } = await setup.direct.query<{ id: string }>(
      `INSERT INTO vault_forward_ledger_entries (record_id, kind, merchant_account_id, payment_method_ids, fingerprints,
         authentication_ids, filled_fields, leaf_index, leaf_hash)
       SELECT 'forged', 'disclosure', merchant_account_id, payment_method_ids, fingerprints, authentication_ids,
              filled_fields, (SELECT max(tree_size) FROM vault_forward_ledger_heads), leaf_hash
         FROM vault_forward_ledger_entries WHERE id = $1 RETURNING id::text`,
      [sealed[0].id],
    );
    const { rows: heads } = await setup.direct.query<{ seq: string }>(
      // Ordered by the number: ordered as text, head 10 would come before head 2.
      'SELECT h.seq::text FROM vault_forward_ledger_heads h WHERE h.merchant_account_id IS NULL ORDER BY h.seq LIMIT 2',
    );
    await setup.direct.query(
      `UPDATE vault_forward_ledger_heads h SET kind = o.kind, tree_size = o.tree_size, root_hash = o.root_hash,
              previous_hash = o.previous_hash, frontier = o.frontier, purged_below = o.purged_below,
              retained = o.retained, signed_at = o.signed_at, signature = o.signature
         FROM vault_forward_ledger_heads o
        WHERE (h.seq, o.seq) IN (($1::bigint, $2::bigint), ($2::bigint, $1::bigint))
          AND h.merchant_account_id IS NULL AND o.merchant_account_id IS NULL`,
      [heads[0].seq, heads[1].seq],
    );

    const tampered = await setup.cli('ledger', 'verify');
    expect(tampered.code).toBe(1);
    const report = JSON.parse(tampered.stdout);
    expect(report.ok).toBe(false);
    expect(report.findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ problem: 'entry-changed', entry_id: changed.id, record_id: changed.record_id }),
        expect.objectContaining({ problem: 'entry-removed', leaf_index: Number(removed.leaf_index) }),
        expect.objectContaining({ problem: 'entry-inserted', entry_id: inserted[0].id }),
        expect.objectContaining({ problem: 'head-signature', seq: Number(heads[0].seq) }),
        expect.objectContaining({ problem: 'head-signature', seq: Number(heads[1].seq) }),
      ]),
    );
    expect(report.first).toMatchObject({ problem: 'entry-changed', entry_id: changed.id });
  });
});
