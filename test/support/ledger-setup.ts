import { createPrivateKey, createPublicKey, KeyObject } from 'node:crypto';
import { Client } from 'pg';
import { createCard } from '../factories/cards';
import { createMerchantWithConfig } from '../factories/forwarding-merchants';
import { ScriptedDownstream, startScriptedDownstream } from './forward-jobs';
import { http, HttpResult } from './http';
import { createIsolatedDatabase, IsolatedDatabase } from './isolated-database';
import { CliResult, ledgerCli } from './ledger-cli';
import { TEST_LEDGER_KEY } from './ledger-key';
import { testTempDir } from './temp-data-dir';
import type { TestApp } from './test-app';
import { waitFor } from './wait';

/**
 * What the ledger's spec files stand on: a database of their own (they tamper with its ledger rows, and `ledger
 * verify` reads all of them), heads sealed every 100 ms, a scripted target, a connection for the raw rows, the
 * compiled CLI on that database, a directory for its files and the public key the heads verify with.
 */
export interface LedgerSetup {
  database: IsolatedDatabase;
  /** The apps' environment: the database, the seal interval, and what the file added. */
  env: Record<string, string>;
  target: ScriptedDownstream;
  direct: Client;
  cli: (...args: string[]) => Promise<CliResult>;
  dir: string;
  publicKey: KeyObject;
  /** A new merchant allowed to forward to the target, with `cards` cards stored. */
  merchant(app: TestApp, name: string, cards: number): Promise<{ id: string; token: string; cards: string[] }>;
  /** A forward of `card` to the target's /pay with `body`, sent now unless `headers` say otherwise. */
  forward(
    app: TestApp,
    token: string,
    card: string,
    body: string,
    headers?: Record<string, string>,
  ): Promise<HttpResult>;
  /**
   * The proof of record `id` once one head covers both its entries: the outcome is written and sealed after the
   * disclosure, so a proof read in between covers the first alone.
   */
  proof(app: TestApp, token: string, id: string): Promise<Record<string, any>>;
  /** Ends the connection, stops the target, drops the database (the apps are the file's to close first). */
  close(): Promise<void>;
}

export async function startLedgerSetup(label: string, env: Record<string, string> = {}): Promise<LedgerSetup> {
  const database = await createIsolatedDatabase(label);
  const target = await startScriptedDownstream();
  const direct = new Client({ connectionString: database.url });
  await direct.connect();
  const dir = testTempDir(`vf-${label}-`);
  return {
    database,
    env: { ...env, DATABASE_URL: database.url, LEDGER_SEAL_INTERVAL_MS: '100' },
    target,
    direct,
    cli: ledgerCli(database.url, dir),
    dir,
    publicKey: createPublicKey(createPrivateKey(TEST_LEDGER_KEY)),
    async merchant(app, name, cards) {
      const { id, token } = await createMerchantWithConfig(app, target.port, name);
      const stored: string[] = [];
      for (let i = 0; i < cards; i++) stored.push((await createCard(app, id)).id);
      return { id, token, cards: stored };
    },
    forward: (app, token, card, body, headers = {}) =>
      http(app.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          'x-vault-forward-url': `${target.url}/pay`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': card,
          'content-type': 'application/json',
          ...headers,
        },
        rawBody: body,
      }),
    proof: (app, token, id) =>
      waitFor(
        async () => {
          const read = await http(app.url, `/vault-forward/requests/${id}/proof`, { token });
          return read.status === 200 && read.body.entries?.length === 2 && (read.body as Record<string, any>);
        },
        { timeoutMs: 20_000, what: `the ledger proof of both entries of ${id}` },
      ),
    async close() {
      await direct.end();
      await target.close();
      await database.drop();
    },
  };
}
