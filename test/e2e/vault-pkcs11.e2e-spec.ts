import { execFile } from 'node:child_process';
import { createHmac, createPublicKey, randomUUID, verify } from 'node:crypto';
import { readdirSync, renameSync } from 'node:fs';
import * as pkcs11js from 'pkcs11js';
import { createForwardingMerchant, ForwardingMerchant } from '../factories/forwarding-merchants';
import { cardNumber, createCard } from '../factories/cards';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { startWorker } from '../support/forward-jobs';
import { dropQueueKeys } from '../support/redis-keys';
import { http } from '../support/http';
import { waitFor } from '../support/wait';
import { testTempDir } from '../support/temp-data-dir';
import { CardVault } from '../../src/modules/vault/card-vault.service';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { createSoftHsmToken, removeSoftHsmConfig, SOFTHSM2_MODULE, SoftHsmToken } from '../support/softhsm';
import { startTestApp, TEST_MASTER_KEY_1, TestApp } from '../support/test-app';
import { Metrics } from '../../src/platform/metrics/metrics.service';
import { unwrapSecret, VaultDecryptionError, wrapSecret } from '../../src/modules/vault/envelope';
import { VAULT_KEYRING, VaultKeyring } from '../../src/modules/vault/keyring';
import { cardAad } from '../../src/modules/vault/card-vault.service';
import { KeyRotationService } from '../../src/modules/vault/key-rotation.service';
import { SecretSealer } from '../../src/modules/vault/secret-sealer';
import { loadModule } from '../../src/modules/vault/pkcs11-keyring';
import { headBytesOf } from '../support/ledger-spec';

/** Runs the compiled CLI with exactly `env` (and PATH). */
function cli(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['dist/cli/main.js', ...args],
      { env: { PATH: process.env.PATH, ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('Vault master keys in a PKCS#11 token (SoftHSM2)', () => {
  let hsm: SoftHsmToken;
  let db: IsolatedDatabase;
  let downstream: Downstream;
  let t: TestApp | undefined;

  beforeAll(async () => {
    hsm = createSoftHsmToken();
    [db, downstream] = await Promise.all([createIsolatedDatabase('pkcs11'), startHttpDownstream()]);
    for (const label of ['hsm-1', 'hsm-2']) {
      const made = await cli(
        { ...hsm.env(''), VAULT_PKCS11_KEY_LABELS: '' },
        'vault',
        'key',
        'create',
        '--label',
        label,
      );
      expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(made.stdout)).toEqual({
        label,
        token_label: hsm.label,
        key_type: 'AES-256',
        extractable: false,
        sensitive: true,
      });
    }
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  afterAll(async () => {
    await Promise.all([downstream.close(), db.drop()]);
    removeSoftHsmConfig();
  });

  /** An app on the test's database whose master keys are the token's `labels` (and no VAULT_MASTER_KEYS unless given). */
  const start = async (labels: string, extra: Record<string, string> = {}, databaseUrl = db.url) =>
    (t = await startTestApp({
      env: {
        DATABASE_URL: databaseUrl,
        FORWARD_INSECURE_HOSTS: `127.0.0.1:${downstream.port}`,
        VAULT_MASTER_KEYS: '',
        ...hsm.env(labels),
        ...extra,
      },
    }));

  const forward = (app: TestApp, m: ForwardingMerchant, card = m.card.id) =>
    http(app.url, '/vault-forward', {
      method: 'POST',
      token: m.token,
      headers: {
        'x-vault-forward-url': `${downstream.url}/charge`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card,
        'content-type': 'application/json',
      },
      rawBody: '{"number":"{{ CARD_NUMBER_1 }}"}',
    });

  /** A logged-in session of the keyring's own instance of the library (a second one would finalise it when collected). */
  const tokenSession = () => {
    const module = loadModule(SOFTHSM2_MODULE);
    const slot = module.C_GetSlotList(true).find((s) => module.C_GetTokenInfo(s).label.trim() === hsm.label)!;
    const session = module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
    try {
      module.C_Login(session, pkcs11js.CKU_USER, hsm.pin);
    } catch (error) {
      if (!/CKR_USER_ALREADY_LOGGED_IN/.test((error as Error).message)) throw error;
    }
    return { module, session };
  };

  const sentNumber = () => JSON.parse(downstream.received.at(-1)!.body.toString()).number as string;

  it('refuses a second key of the same label, and a wrong PIN, naming neither the PIN nor key bytes', async () => {
    const again = await cli(hsm.env(''), 'vault', 'key', 'create', '--label', 'hsm-1');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already holds a key labelled "hsm-1"');
    const wrongPin = await cli(
      { ...hsm.env(''), VAULT_PKCS11_PIN_FILE: '', VAULT_PKCS11_PIN: '11112222' },
      'vault',
      'key',
      'create',
      '--label',
      'hsm-3',
    );
    expect(wrongPin.code).toBe(1);
    expect(wrongPin.stderr).toContain('CKR_PIN_INCORRECT');
    expect(wrongPin.stderr).not.toContain('11112222');
    const noLabel = await cli(hsm.env(''), 'vault', 'key', 'create');
    expect(noLabel.code).toBe(2);
    expect(noLabel.stderr).toContain('vault key create needs --label NAME');
  });

  it('stores cards and forwards them, again after a restart, with no master key in the environment, the database or DATA_DIR', async () => {
    let app = await start('hsm-1');
    const m = await createForwardingMerchant(app, downstream.port, 'HSM shop');
    const first = await forward(app, m);
    expect(first.status).toBe(200);
    expect(sentNumber()).toBe(m.card.number);

    const [row] = await app.db.query<Array<{ wrapped_key: Buffer; master_key_id: string; ciphertext: Buffer }>>(
      'SELECT wrapped_key, master_key_id, ciphertext FROM payment_methods WHERE id = $1',
      [m.card.id],
    );
    // Wrapped inside the token (version 2: IV, ciphertext and tag of CKM_AES_GCM), under the token key's label.
    expect(row.master_key_id).toBe('hsm-1');
    expect(row.wrapped_key[0]).toBe(2);
    expect(row.wrapped_key).toHaveLength(1 + 12 + 32 + 16);
    const [keys] = await app.db.query<Array<{ ids: string[] }>>(
      `SELECT array_agg(DISTINCT master_key_id) AS ids FROM (
         SELECT master_key_id FROM payment_methods UNION ALL SELECT master_key_id FROM vault_merchant_keys) k`,
    );
    expect(keys.ids).toEqual(['hsm-1']);
    // No raw key anywhere this process could read: not configured, and no development key generated.
    expect(app.config.vaultMasterKeys).toEqual([]);
    expect(Object.keys(process.env).filter((name) => name.startsWith('VAULT_MASTER'))).toEqual([]);
    expect(readdirSync(app.config.dataDir).filter((name) => name.includes('vault-master-key'))).toEqual([]);

    await app.close();
    app = await start('hsm-1');
    const again = await forward(app, m);
    expect(again.status).toBe(200);
    expect(sentNumber()).toBe(m.card.number);

    const another = await createCard(app, m.id, { number: cardNumber() });
    expect((await forward(app, m, another.id)).status).toBe(200);

    // Every unwrap that missed the cache went to the token, and was counted with its latency.
    const metrics = await app.get(Metrics).registry.metrics();
    expect(metrics).toMatch(/vault_forward_data_key_unwraps_total\{source="key_store"\} [1-9]/);
    expect(metrics).toMatch(/vault_forward_key_store_duration_seconds_count\{operation="unwrap",outcome="ok"\} [1-9]/);
  });

  it('keeps the master key in the token: CKA_VALUE is refused, the key is sensitive and never extractable', () => {
    const { module, session } = tokenSession();
    try {
      module.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_LABEL, value: 'hsm-1' }]);
      const [key] = module.C_FindObjects(session, 2);
      module.C_FindObjectsFinal(session);
      expect(() => module.C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_VALUE }])).toThrow(
        /CKR_ATTRIBUTE_SENSITIVE/,
      );
      const [sensitive, extractable, neverExtractable] = module.C_GetAttributeValue(session, key, [
        { type: pkcs11js.CKA_SENSITIVE },
        { type: pkcs11js.CKA_EXTRACTABLE },
        { type: pkcs11js.CKA_NEVER_EXTRACTABLE },
      ]);
      expect([sensitive.value, extractable.value, neverExtractable.value]).toEqual([
        Buffer.from([1]),
        Buffer.from([0]),
        Buffer.from([1]),
      ]);
    } finally {
      module.C_CloseSession(session);
    }
  });

  it('signs the ledger’s heads with a P-256 key pair that never leaves the token (LEDGER_PKCS11_KEY_LABEL)', async () => {
    const made = await cli(hsm.env(''), 'ledger', 'key', 'create', '--label', 'ledger-1');
    expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: '' });
    const key = JSON.parse(made.stdout);
    expect(key).toMatchObject({
      label: 'ledger-1',
      token_label: hsm.label,
      key_type: 'EC P-256',
      extractable: false,
      sensitive: true,
    });
    const again = await cli(hsm.env(''), 'ledger', 'key', 'create', '--label', 'ledger-1');
    expect(again.stderr).toContain('already holds a key labelled "ledger-1"');

    const app = await start('hsm-1', {
      LEDGER_SIGNING_KEY: '',
      LEDGER_PKCS11_KEY_LABEL: 'ledger-1',
      LEDGER_SEAL_INTERVAL_MS: '100',
    });
    const m = await createForwardingMerchant(app, downstream.port, 'HSM ledger shop');
    const sent = await forward(app, m);
    expect(sent.status).toBe(200);
    const id = sent.headers.get('x-vault-forward-request-id');
    const proof = await waitFor(
      async () => {
        const read = await http(app.url, `/vault-forward/requests/${id}/proof`, { token: m.token });
        return read.status === 200 && read.body;
      },
      { timeoutMs: 20_000, what: 'the forward’s ledger proof' },
    );
    const h = proof.head;
    expect(h.key_id).toBe(key.key_id);
    // The head's signed bytes as decision 0133 gives them, checked with the public key the CLI printed.
    const signed = headBytesOf(h);
    const publicKey = createPublicKey(key.public_key);
    const signature = Buffer.from(h.signature, 'base64');
    expect(verify('sha256', signed, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);

    // The private key is the token's: its value is refused, it is sensitive and was never extractable.
    const { module, session } = tokenSession();
    try {
      module.C_FindObjectsInit(session, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
        { type: pkcs11js.CKA_LABEL, value: 'ledger-1' },
      ]);
      const [privateKey] = module.C_FindObjects(session, 2);
      module.C_FindObjectsFinal(session);
      expect(() => module.C_GetAttributeValue(session, privateKey, [{ type: pkcs11js.CKA_VALUE }])).toThrow(
        /CKR_ATTRIBUTE_SENSITIVE/,
      );
      const [extractable, neverExtractable] = module.C_GetAttributeValue(session, privateKey, [
        { type: pkcs11js.CKA_EXTRACTABLE },
        { type: pkcs11js.CKA_NEVER_EXTRACTABLE },
      ]);
      expect([extractable.value, neverExtractable.value]).toEqual([Buffer.from([0]), Buffer.from([1])]);
    } finally {
      module.C_CloseSession(session);
    }
  });

  it('answers 503 vault-key-store-unavailable while the token is away, sends nothing, and recovers when it is back', async () => {
    // No cache: every forward needs the token.
    const app = await start('hsm-1', { VAULT_DATA_KEY_CACHE_SIZE: '0' });
    const m = await createForwardingMerchant(app, downstream.port, 'HSM outage shop');
    expect((await forward(app, m)).status).toBe(200);
    const sent = downstream.received.length;

    // The token's storage disappears under the running process (a network HSM gone, a removed token).
    renameSync(hsm.tokenDir, `${hsm.tokenDir}-away`);
    try {
      const refused = await forward(app, m);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.body).toMatchObject({
        type: '/errors/vault-key-store-unavailable',
        status: 503,
        code: 'vault-key-store-unavailable',
      });
      expect(refused.body.detail).toContain('master key "hsm-1"');
      const store = await http(app.url, '/payment-methods', {
        method: 'POST',
        token: m.token,
        body: { method: 'card', number: cardNumber(), expiration_date: '12/30' },
      });
      expect(store.status).toBe(503);
      expect(store.body.code).toBe('vault-key-store-unavailable');
      expect(downstream.received.length).toBe(sent);
    } finally {
      renameSync(`${hsm.tokenDir}-away`, hsm.tokenDir);
    }
    // Back within about a second: the library is re-initialised at most once a second (pkcs11-keyring.ts).
    await waitFor(async () => (await forward(app, m)).status === 200, { intervalMs: 200, what: 'a forward to pass' });
    expect(sentNumber()).toBe(m.card.number);
    const metrics = await app.get(Metrics).registry.metrics();
    expect(metrics).toMatch(
      /vault_forward_key_store_duration_seconds_count\{operation="unwrap",outcome="error"\} [1-9]/,
    );
  });

  it('queued forwards wait while the token is away, send no card, and all succeed once each after it is back', async () => {
    // No cache anywhere: every plan and card the worker opens needs the token. Half the jobs are queued through an
    // API whose plans are sealed under a raw key the worker also holds (a rotation into the token half done): their
    // plans open without the token and their cards do not, so both the claim and the send are put off.
    const env = {
      QUEUE_BACKEND: 'redis',
      FORWARD_QUEUE_NAME: `test-pkcs11-jobs-${randomUUID()}`,
      FORWARD_RETRY_BASE_MS: '20',
      VAULT_DATA_KEY_CACHE_SIZE: '0',
    };
    const app = await start('hsm-1', env);
    const envOnly = Object.fromEntries(Object.keys(hsm.env('')).map((name) => [name, '']));
    const rawKeyApp = await startTestApp({
      env: {
        ...env,
        DATABASE_URL: db.url,
        FORWARD_INSECURE_HOSTS: `127.0.0.1:${downstream.port}`,
        ...envOnly,
        VAULT_MASTER_KEYS: TEST_MASTER_KEY_1,
      },
    });
    const worker = await startWorker({
      ...env,
      DATABASE_URL: db.url,
      FORWARD_INSECURE_HOSTS: `127.0.0.1:${downstream.port}`,
      ...hsm.env('hsm-1'),
      VAULT_MASTER_KEYS: TEST_MASTER_KEY_1,
    });
    try {
      const m = await createForwardingMerchant(app, downstream.port, 'HSM queued shop');
      const queue = (n: number) =>
        http(n >= 4 && n < 8 ? rawKeyApp.url : app.url, '/vault-forward', {
          method: 'POST',
          token: m.token,
          headers: {
            prefer: 'respond-async',
            'x-vault-forward-url': `${downstream.url}/queued`,
            'x-vault-forward-http-method': 'POST',
            'x-vault-forward-payment-methods': m.card.id,
            'content-type': 'application/json',
          },
          rawBody: `{"number":"{{ CARD_NUMBER_1 }}","n":${n}}`,
        });
      const toQueued = () => downstream.received.filter((r) => r.url === '/queued');

      // Accepted while the token is there (the API seals each plan in it); the worker is held meanwhile.
      worker.child.kill('SIGSTOP');
      const jobs: string[] = [];
      try {
        for (let n = 0; n < 8; n++) {
          const accepted = await queue(n);
          expect(accepted.status).toBe(202);
          jobs.push(accepted.body.id as string);
        }
        renameSync(hsm.tokenDir, `${hsm.tokenDir}-away`);
      } finally {
        worker.child.kill('SIGCONT');
      }
      try {
        // While it is away: nothing new is accepted (503, nothing stored), and the worker's tries send nothing.
        const refused = await queue(99);
        expect(refused.status).toBe(503);
        expect(refused.body.code).toBe('vault-key-store-unavailable');
        // Several rounds of the worker's tries (each logs the token's silence), far longer than a job's five
        // attempts at FORWARD_RETRY_BASE_MS=20 would last; cut short should a job leave `queued`.
        const states = async () =>
          Promise.all(
            jobs.map(async (id) => (await http(app.url, `/vault-forward/jobs/${id}`, { token: m.token })).body),
          );
        await waitFor(
          async () =>
            worker.output().split('the token does not answer').length > 2 * jobs.length ||
            (await states()).some((job) => !['queued', 'running'].includes(job.status as string)),
          { timeoutMs: 30_000, intervalMs: 200, what: 'the worker to try every job about twice' },
        );
        expect(toQueued()).toEqual([]);
        // Put off, not tried: no attempt is counted against any job (one may be between its claim and giving
        // it back: running, its attempt without an outcome). Each ends below with exactly one attempt.
        for (const job of await states()) {
          expect(['queued', 'running']).toContain(job.status);
          expect((job.attempts as Array<{ duration_ms: number | null }>).map((a) => a.duration_ms)).toEqual(
            job.status === 'queued' ? [] : [null],
          );
        }
      } finally {
        renameSync(`${hsm.tokenDir}-away`, hsm.tokenDir);
      }

      const attempts: string[] = [];
      for (const id of jobs) {
        const job = await waitFor(
          async () => {
            const answer = await http(app.url, `/vault-forward/jobs/${id}`, { token: m.token });
            return ['succeeded', 'failed', 'cancelled'].includes(answer.body.status as string) && answer.body;
          },
          { timeoutMs: 30_000, intervalMs: 100, what: `job ${id} to end` },
        );
        expect(job).toMatchObject({ status: 'succeeded', attempts: [{ number: 1, status: 200 }] });
        attempts.push((job.attempts as Array<{ request_id: string }>)[0].request_id);
      }
      // The disclosure log holds each job's one attempt: a try put off before its cards opened disclosed nothing and
      // left no record (the raw-key half's plans opened, their cards did not: before, a 503 record each time).
      // Written by the worker in batches: waited for until the last outcome is in.
      const records = await waitFor(async () => {
        const found = await app.db.query<Array<{ id: string; status: number; error_type: string | null }>>(
          `SELECT id, status, error_type FROM vault_forward_requests
            WHERE merchant_account_id = $1 AND target_url LIKE '%/queued'`,
          [m.id],
        );
        return found.filter((record) => record.status === 200).length === jobs.length && found;
      });
      expect(records.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
        attempts.sort().map((id) => ({ id, status: 200, error_type: null })),
      );
      // Each job's request exactly once, with the card filled in.
      const sent = toQueued().map((r) => JSON.parse(r.body.toString()) as { number: string; n: number });
      expect(sent.map((body) => body.n).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(new Set(sent.map((body) => body.number))).toEqual(new Set([m.card.number]));

      // The key-use audit: with no cache, every plan and card the worker opened was an unwrap by the token, each
      // logged with the key's label, what the data key is bound to, the time taken and the outcome.
      const audit = worker
        .output()
        .split('\n')
        .filter((line) => line.includes('"context":"VaultKeyUse"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const use = (purpose: string, owners: string[], outcome: string) =>
        expect.objectContaining({
          msg: 'data key unwrapped by the key store',
          provider: 'pkcs11',
          token_label: hsm.label,
          key_label: 'hsm-1',
          purpose,
          owners,
          duration_ms: expect.any(Number),
          outcome,
        });
      for (const id of jobs.slice(0, 4)) {
        expect(audit).toContainEqual(use('forward-job-plan', [m.id, id], 'unavailable'));
        expect(audit).toContainEqual(use('forward-job-plan', [m.id, id], 'ok'));
      }
      // The other half's plans opened with the raw key (not audited), their cards only with the token.
      for (const id of jobs.slice(4)) expect(audit).not.toContainEqual(use('forward-job-plan', [m.id, id], 'ok'));
      expect(audit).toContainEqual(use('payment-method', [m.id, m.card.id], 'unavailable'));
      expect(audit).toContainEqual(use('payment-method', [m.id, m.card.id], 'ok'));
      // Unavailable is a warning, ok is info; no line holds key material: not the card's data key, not its
      // wrapped form, not the PIN, nor the card number.
      expect(new Set(audit.map((line) => `${line.outcome as string}:${line.level as number}`))).toEqual(
        new Set(['unavailable:40', 'ok:30']),
      );
      const [row] = await app.db.query<Array<{ wrapped_key: Buffer }>>(
        'SELECT wrapped_key FROM payment_methods WHERE id = $1',
        [m.card.id],
      );
      const keyring = app.get<VaultKeyring>(VAULT_KEYRING);
      const dataKey = unwrapSecret(row.wrapped_key, 'hsm-1', cardAad(m.id, m.card.id), keyring, 'the card');
      expect(dataKey).toHaveLength(32);
      const logged = worker.output();
      for (const secret of [dataKey, row.wrapped_key, row.wrapped_key.subarray(13)])
        for (const encoding of ['hex', 'base64', 'base64url'] as const)
          expect(logged).not.toContain(secret.toString(encoding));
      expect(logged).not.toContain(hsm.pin);
      expect(logged).not.toContain(m.card.number);
      dataKey.fill(0);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
      await rawKeyApp.close();
      await dropQueueKeys(env.FORWARD_QUEUE_NAME);
    }
  }, 120_000);

  it('a callback that falls due while the token is away is put off, not tried, and delivered once after it is back', async () => {
    // No cache: each try of the callback opens its sealed message (then the merchant's webhook secret) in the token.
    const env = {
      QUEUE_BACKEND: 'redis',
      FORWARD_QUEUE_NAME: `test-pkcs11-callbacks-${randomUUID()}`,
      FORWARD_RETRY_BASE_MS: '20',
      VAULT_DATA_KEY_CACHE_SIZE: '0',
    };
    const app = await start('hsm-1', env);
    const worker = await startWorker({
      ...env,
      DATABASE_URL: db.url,
      FORWARD_INSECURE_HOSTS: `127.0.0.1:${downstream.port}`,
      ...hsm.env('hsm-1'),
    });
    try {
      const m = await createForwardingMerchant(app, downstream.port, 'HSM callback shop');
      const path = `/callback/${randomUUID()}`;
      const accepted = await http(app.url, '/vault-forward', {
        method: 'POST',
        token: m.token,
        headers: {
          prefer: 'respond-async',
          'x-vault-forward-url': `${downstream.url}/charge`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': m.card.id,
          'x-vault-forward-callback-url': `${downstream.url}${path}`,
          'content-type': 'application/json',
        },
        rawBody: '{"number":"{{ CARD_NUMBER_1 }}"}',
      });
      expect(accepted.status).toBe(202);
      const jobId = accepted.body.id as string;
      const messageId = `job_${jobId.replace(/-/g, '')}`;
      const delivery = async () =>
        (
          await app.db.query<Array<{ state: string; attempts: number; last_status: number | null; waiting: boolean }>>(
            `SELECT state, attempts, last_status, next_attempt_at = 'infinity' AS waiting
               FROM vault_forward_callback_deliveries WHERE message_id = $1`,
            [messageId],
          )
        )[0];
      const callbacks = () => downstream.received.filter((r) => r.url === path);

      // The job ends with the token there; its merchant has no webhook secret yet, so the callback waits (uncounted).
      await waitFor(async () => (await delivery())?.waiting === true, { what: 'the callback to wait for a secret' });
      // The secret, created while the token is there, makes the callback due; the worker is held until the token is
      // away, so every try of the callback meets the token away.
      worker.child.kill('SIGSTOP');
      let secret: string;
      try {
        const created = await http(app.url, '/vault-forward/webhook-secrets', { method: 'POST', token: m.token });
        expect(created.status).toBe(201);
        secret = created.body.secret as string;
        renameSync(hsm.tokenDir, `${hsm.tokenDir}-away`);
      } finally {
        worker.child.kill('SIGCONT');
      }
      try {
        const unavailable = () =>
          worker
            .output()
            .split('\n')
            .filter((line) => line.includes('"context":"VaultKeyUse"'))
            .map((line) => JSON.parse(line) as { purpose: string; outcome: string })
            .filter((line) => line.purpose === 'callback-body' && line.outcome === 'unavailable').length;
        // Three tries at least, far more time than the callback's eight attempts at FORWARD_RETRY_BASE_MS=20 take.
        await waitFor(async () => unavailable() >= 3 || (await delivery()).state !== 'pending', {
          timeoutMs: 30_000,
          intervalMs: 200,
          what: 'the worker to try the callback three times',
        });
        expect(callbacks()).toEqual([]);
        // Put off, not tried: pending, with no attempt counted (one may be between its claim and giving it back).
        const waiting = await delivery();
        expect(waiting).toMatchObject({ state: 'pending', waiting: false, last_status: null });
        expect(waiting.attempts).toBeLessThanOrEqual(1);
      } finally {
        renameSync(`${hsm.tokenDir}-away`, hsm.tokenDir);
      }

      const delivered = await waitFor(
        async () => {
          const row = await delivery();
          return row.state !== 'pending' && row;
        },
        { timeoutMs: 30_000, intervalMs: 100, what: 'the callback to be delivered' },
      );
      expect(delivered).toEqual({ state: 'delivered', attempts: 1, last_status: 200, waiting: false });
      // Once, signed with the secret created meanwhile, carrying the job that ended with its one attempt.
      const [sent] = callbacks();
      expect(callbacks()).toHaveLength(1);
      expect(sent.headers['webhook-id']).toBe(messageId);
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      const signed = `${messageId}.${sent.headers['webhook-timestamp'] as string}.${sent.body.toString()}`;
      expect(sent.headers['webhook-signature']).toBe(`v1,${createHmac('sha256', key).update(signed).digest('base64')}`);
      expect(JSON.parse(sent.body.toString())).toMatchObject({
        id: jobId,
        status: 'succeeded',
        attempts: [{ number: 1, status: 200 }],
      });
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
      await dropQueueKeys(env.FORWARD_QUEUE_NAME);
    }
  }, 120_000);

  it('a wrapped key moved onto another record or altered does not open, even with the data key cached', async () => {
    const app = await start('hsm-1');
    const sealer = app.get(SecretSealer);
    const sealed = sealer.seal('record-a', Buffer.from('secret'));
    expect(sealer.open('record-a', sealed, 'a').toString()).toBe('secret');
    // Warm in the cache under record-a: record-b must still go to the token, which refuses it.
    expect(() => sealer.open('record-b', sealed, 'b')).toThrow(VaultDecryptionError);
    const altered = Buffer.from(sealed.wrappedKey);
    altered[20] ^= 1;
    expect(() => sealer.open('record-a', { ...sealed, wrappedKey: altered }, 'a')).toThrow(VaultDecryptionError);
    // A bare secret has no second layer: only the cache entry's binding to the AAD stops it.
    const keyring = app.get<VaultKeyring>(VAULT_KEYRING);
    const wrapped = wrapSecret(Buffer.from('fingerprint key'), 'merchant-a', keyring.current);
    expect(unwrapSecret(wrapped, 'hsm-1', 'merchant-a', keyring, 'a').toString()).toBe('fingerprint key');
    expect(() => unwrapSecret(wrapped, 'hsm-1', 'merchant-b', keyring, 'b')).toThrow(VaultDecryptionError);
    expect(() => sealer.open('record-a', { ...sealed, masterKeyId: 'hsm-2' }, 'a')).toThrow(
      'which VAULT_PKCS11_KEY_LABELS (or VAULT_MASTER_KEYS) does not hold',
    );
  });

  it('a warm cache forwards a known card while the token is away, and counts the hit', async () => {
    const app = await start('hsm-1');
    // Its records keep their bodies (decision 0138), which are sealed under the token.
    const m = await createForwardingMerchant(app, downstream.port, 'HSM cache shop', ['POST'], { record_bodies: true });
    expect((await forward(app, m)).status).toBe(200);
    renameSync(hsm.tokenDir, `${hsm.tokenDir}-away`);
    try {
      expect((await forward(app, m)).status).toBe(200);
      expect(sentNumber()).toBe(m.card.number);
    } finally {
      renameSync(`${hsm.tokenDir}-away`, hsm.tokenDir);
    }
    const metrics = await app.get(Metrics).registry.metrics();
    expect(metrics).toMatch(/vault_forward_data_key_unwraps_total\{source="cache"\} [1-9]/);
    // Its record is kept; only its redacted bodies, which need the token to be sealed, are not (decisions 0104, 0138).
    const rows = await waitFor(async () => {
      const found = await app.db.query(
        `SELECT status, ciphertext IS NOT NULL AS bodies FROM vault_forward_requests
          WHERE merchant_account_id = $1 ORDER BY created_at`,
        [m.id],
      );
      return found.length === 2 && found.every((row: { status: number | null }) => row.status !== null) ? found : null;
    });
    expect(rows).toEqual([
      { status: 200, bodies: true },
      { status: 200, bodies: false },
    ]);
  });

  it('the data-key cache keeps VAULT_DATA_KEY_CACHE_SIZE keys, least recently used out first, for VAULT_DATA_KEY_CACHE_TTL', async () => {
    const app = await start('hsm-1', { VAULT_DATA_KEY_CACHE_SIZE: '2', VAULT_DATA_KEY_CACHE_TTL: '1' });
    const sealer = app.get(SecretSealer);
    const sealed = Object.fromEntries(
      ['a', 'b', 'c'].map((name) => [name, sealer.seal(`record-${name}`, Buffer.from(`secret ${name}`))]),
    );
    const unwraps = async (source: 'cache' | 'key_store') =>
      Number(
        new RegExp(`vault_forward_data_key_unwraps_total\\{source="${source}"\\} (\\d+)`).exec(
          await app.get(Metrics).registry.metrics(),
        )?.[1] ?? 0,
      );
    /** Opens each record in turn; how many of the opens the token answered (the others came from the cache). */
    const byToken = async (...names: string[]) => {
      const before = await unwraps('key_store');
      for (const name of names)
        expect(sealer.open(`record-${name}`, sealed[name], name).toString()).toBe(`secret ${name}`);
      return (await unwraps('key_store')) - before;
    };
    expect(await byToken('a', 'a', 'b')).toBe(2); // a and b cached
    expect(await byToken('a', 'b')).toBe(0);
    expect(await byToken('c')).toBe(1); // a, the least recently used, makes room for c
    expect(await byToken('b', 'c')).toBe(0);
    expect(await byToken('a')).toBe(1); // and back, b out
    expect(await byToken('c', 'a')).toBe(0);
    // Past the TTL (1 s) every entry has expired, however recently used.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await byToken('a', 'c', 'a')).toBe(2);
    expect(await unwraps('cache')).toBe(8);
  });

  it('rotates an env keyring into the token: old cards keep forwarding, then the raw key can go', async () => {
    // A database of its own: the rows the other tests wrapped under hsm-1 are not this rotation's.
    const own = await createIsolatedDatabase('pkcs11_rotate');
    try {
      const envOnly = Object.fromEntries(Object.keys(hsm.env('')).map((name) => [name, '']));
      let app = await start('', { ...envOnly, VAULT_MASTER_KEYS: TEST_MASTER_KEY_1 }, own.url);
      const m = await createForwardingMerchant(app, downstream.port, 'HSM rotation shop');
      const cards = [m.card.id];
      for (let i = 0; i < 5; i++) cards.push((await createCard(app, m.id)).id);
      await app.close();

      // Both: the token's key current, the env key only unwraps.
      app = await start('hsm-2', { VAULT_MASTER_KEYS: TEST_MASTER_KEY_1 }, own.url);
      expect((await forward(app, m)).status).toBe(200);
      const result = await app.get(KeyRotationService).rotate(2);
      expect(result).toMatchObject({
        master_key_id: 'hsm-2',
        rewrapped_payment_methods: 6,
        rewrapped_merchant_keys: 1,
        remaining: 0,
      });
      await app.close();

      // The raw key removed: everything opens with the token alone.
      app = await start('hsm-2', {}, own.url);
      for (const card of cards) {
        expect((await forward(app, m, card)).status).toBe(200);
      }
      await app.close();
      t = undefined;
    } finally {
      await own.drop();
    }
  });

  it('rotates 10,000 env-wrapped cards into the token with the CLI while forwards run, none failing', async () => {
    const own = await createIsolatedDatabase('pkcs11_rotate_10k');
    try {
      const envOnly = Object.fromEntries(Object.keys(hsm.env('')).map((name) => [name, '']));
      let app = await start('', { ...envOnly, VAULT_MASTER_KEYS: TEST_MASTER_KEY_1 }, own.url);
      const m = await createForwardingMerchant(app, downstream.port, 'HSM 10k shop');
      // Sealed by the real CardVault under the env key, inserted in bulk (the API would take minutes); each its own
      // fingerprint, so the disclosure budgets (by fingerprint, decision 0142) see 10,000 cards, as they are.
      const vault = app.get(CardVault);
      const cards = new Map<string, string>([[m.card.id, m.card.number]]);
      for (let chunk = 0; chunk < 5; chunk++) {
        const rows = Array.from({ length: 2000 }, () => {
          const id = randomUUID();
          const number = cardNumber();
          cards.set(id, number);
          return { id, number, sealed: vault.seal(m.id, id, { number, cardholderName: null }) };
        });
        await app.db.query(
          `INSERT INTO payment_methods (id, merchant_account_id, method, scheme, label, expiration_date, fingerprint,
             ciphertext, wrapped_key, master_key_id)
           SELECT id, $1, 'card', 'visa', label, '12/30', 'bulk-' || id, ciphertext, wrapped_key, $2
             FROM unnest($3::uuid[], $4::text[], $5::bytea[], $6::bytea[]) AS r(id, label, ciphertext, wrapped_key)`,
          [
            m.id,
            'test-k1',
            rows.map((r) => r.id),
            rows.map((r) => r.number.slice(-4)),
            rows.map((r) => r.sealed.ciphertext),
            rows.map((r) => r.sealed.wrappedKey),
          ],
        );
      }
      await app.close();

      app = await start('hsm-2', { VAULT_MASTER_KEYS: TEST_MASTER_KEY_1 }, own.url);
      const ids = [...cards.keys()];
      let rotating = true;
      const statuses: number[] = [];
      const forwards = (async () => {
        while (rotating) {
          const id = ids[Math.floor(Math.random() * ids.length)];
          const answer = await forward(app, m, id);
          statuses.push(answer.status);
          if (answer.status === 200) expect(sentNumber()).toBe(cards.get(id));
        }
      })();
      const cliEnv = {
        DATABASE_URL: own.url,
        DATA_DIR: testTempDir('vf-pkcs11-cli-'),
        ...hsm.env('hsm-2'),
        VAULT_MASTER_KEYS: TEST_MASTER_KEY_1,
      };
      const rotate = () => cli(cliEnv, 'vault', 'rotate-keys', '--batch-size', '1000');
      const during = await rotate().finally(() => (rotating = false));
      await forwards;
      // Rows a forward's usage update held locked are skipped (SKIP LOCKED), reported as remaining, exit 1.
      const first = JSON.parse(during.stdout) as { rewrapped_payment_methods: number; remaining: number };
      expect(first.rewrapped_payment_methods + first.remaining).toBe(cards.size);
      expect(during.code).toBe(first.remaining === 0 ? 0 : 1);
      // Run again, as docs/vault.md says: it resumes with what is left.
      const again = await rotate();
      // stderr: the rotation's log lines (JSON, its audit trail), then what the operator may do now.
      const stderrLines = again.stderr.trimEnd().split('\n');
      expect({ code: again.code, last: stderrLines.pop() }).toEqual({
        code: 0,
        last:
          'Every row is under master key "hsm-2": test-k1 may now be removed ' +
          '(from VAULT_MASTER_KEYS or VAULT_PKCS11_KEY_LABELS, then from the token).',
      });
      const logLines = stderrLines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(logLines.filter((line) => (line.level as number) >= 40)).toEqual([]);
      const finished = (run: string) =>
        run
          .split('\n')
          .filter((line) => line.startsWith('{') && line.includes('master key rotation finished'))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(finished(during.stderr)).toEqual([
        expect.objectContaining({
          context: 'KeyRotation',
          master_key_id: 'hsm-2',
          rewrapped: expect.objectContaining({ rewrapped_payment_methods: first.rewrapped_payment_methods }),
          remaining: first.remaining,
        }),
      ]);
      expect(finished(again.stderr)).toHaveLength(1);
      expect(JSON.parse(again.stdout)).toMatchObject({
        master_key_id: 'hsm-2',
        rewrapped_payment_methods: first.remaining,
        remaining: 0,
      });
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      await app.close();

      // The raw key gone: a sample of the rotated cards opens with the token alone.
      app = await start('hsm-2', {}, own.url);
      for (const id of ids.slice(0, 20)) {
        expect((await forward(app, m, id)).status).toBe(200);
        expect(sentNumber()).toBe(cards.get(id));
      }
      await app.close();
      t = undefined;
    } finally {
      await own.drop();
    }
  });
});
