import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { createCard } from '../factories/cards';
import { createMerchantWithConfig } from '../factories/forwarding-merchants';
import { http, HttpResult } from '../support/http';
import { TcpProxy } from '../support/tcp-proxy';
import { testTempDir } from '../support/temp-data-dir';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/** A spool as small as the one the fault run filled (256 KiB), on a file system that really fills up. */
const SPOOL_SIZE = '256k';
const spoolMount = testTempDir('vf-spool-tmpfs-');
let mountRefused: string | null = null;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${SPOOL_SIZE},mode=0700`, 'tmpfs', spoolMount], { stdio: 'pipe' });
} catch (error) {
  mountRefused = String((error as { stderr?: Buffer }).stderr ?? error).trim();
  console.warn(`skipping the full-spool fault test: mounting a tmpfs was refused (${mountRefused})`);
}
const onTmpfs = mountRefused === null ? it : it.skip;

const eventually = <T>(check: () => Promise<T>, timeoutMs = 30_000) => waitFor(check, { timeoutMs });

describe('A full spool disk during a PostgreSQL outage (a 256 KiB tmpfs)', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let direct: Client;
  let downstream: Server;
  let downstreamUrl: string;
  let token: string;
  const cards: string[] = [];
  /** The x-attempt of every request the downstream received. */
  const received = new Set<string>();

  beforeAll(async () => {
    if (mountRefused !== null) return;
    direct = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await direct.connect();
    downstream = createServer((req, res) => {
      received.add(String(req.headers['x-attempt']));
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    await new Promise<void>((r) => downstream.listen(0, '127.0.0.1', () => r()));
    downstreamUrl = `http://127.0.0.1:${(downstream.address() as AddressInfo).port}`;
    proxy = await TcpProxy.start('127.0.0.1', 5432);
    const viaProxy = new URL(process.env.TEST_DATABASE_URL!);
    viaProxy.host = proxy.address;
    t = await startTestApp({
      env: {
        DATABASE_URL: viaProxy.toString(),
        FORWARD_INSECURE_HOSTS: '127.0.0.1',
        FORWARD_RECORD_SPOOL_DIR: spoolMount,
      },
    });
    const port = Number(new URL(downstreamUrl).port);
    let merchant: string;
    ({ id: merchant, token } = await createMerchantWithConfig(t, port, 'Full spool downstream', ['POST']));
    for (let i = 0; i < 8; i++) cards.push((await createCard(t, merchant)).id);
  });

  afterAll(async () => {
    if (mountRefused !== null) return;
    await proxy.restore();
    await t.close();
    await proxy.close();
    await direct.end();
    await new Promise<void>((r) => downstream.close(() => r()));
    execFileSync('umount', [spoolMount]);
  });

  function forward(card: string, attempt: string): Promise<HttpResult> {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${downstreamUrl}/charge`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card,
        'x-vault-forward-header-x-attempt': attempt,
        'content-type': 'application/json',
      },
      rawBody: JSON.stringify({ number: '{{ CARD_NUMBER_1 }}', padding: 'x'.repeat(2_000) }),
    });
  }

  onTmpfs('every forward answered 200 has its record after recovery; none refused with 503 was sent', async () => {
    // Cards, config and token cached while PostgreSQL answers, so forwards go on during the outage.
    for (const card of cards) expect((await forward(card, randomUUID())).status).toBe(200);
    const answered: Array<{ attempt: string; status: number; id: string | null }> = [];
    const spoolFiles = () => readdirSync(spoolMount).filter((name) => name.endsWith('.jsonl'));
    let filesAtMost = 0;
    await proxy.cut();
    try {
      // Until the spool has been full for a while: 503s, and 200s again as outcomes go in after refusals.
      for (let round = 0; round < 200 && answered.filter((a) => a.status === 503).length < 100; round++) {
        await Promise.all(
          cards.map(async (card) => {
            const attempt = randomUUID();
            const result = await forward(card, attempt);
            answered.push({ attempt, status: result.status, id: result.headers.get('x-vault-forward-request-id') });
          }),
        );
        filesAtMost = Math.max(filesAtMost, spoolFiles().length);
      }
    } finally {
      await proxy.restore();
    }
    const ok = answered.filter((a) => a.status === 200);
    const refused = answered.filter((a) => a.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(100);
    expect(ok.length).toBeGreaterThan(0);
    expect(ok.length + refused.length).toBe(answered.length);
    // One file for the process, however many appends failed.
    expect(filesAtMost).toBe(1);

    // Nothing refused reached the downstream; everything answered 200 did.
    expect(refused.filter((a) => received.has(a.attempt))).toEqual([]);
    expect(ok.filter((a) => !received.has(a.attempt))).toEqual([]);

    // After the replay, each 200 has its record with its outcome, and each refusal its 503 record (a refusal
    // answer names no record id: counted per status among these cards' records, none of which is left open).
    const ids = ok.map((a) => a.id!);
    await eventually(async () => {
      const { rows } = await direct.query<{ status: number | null; count: string }>(
        'SELECT status, count(*) FROM vault_forward_requests WHERE payment_method_ids && $1::uuid[] GROUP BY status',
        [cards],
      );
      const count = new Map(rows.map((r) => [r.status, Number(r.count)]));
      return count.get(503) === refused.length && !count.has(null);
    });
    const { rows } = await direct.query<{ id: string; status: number | null }>(
      'SELECT id, status FROM vault_forward_requests WHERE id = ANY($1)',
      [ids],
    );
    const status = new Map(rows.map((r) => [r.id, r.status]));
    expect(ok.filter((a) => status.get(a.id!) !== 200)).toEqual([]);
    await eventually(async () => spoolFiles().length === 0);

    // No torn line was met on replay, and the failures were logged once for the outage, however the appends flapped.
    expect(t.logs.text).not.toContain('torn or unreadable');
    expect(t.logs.text.split('could not spool').length - 1).toBe(1);
  });
});
