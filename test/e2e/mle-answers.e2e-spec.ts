import { generateKeyPairSync, KeyObject, randomUUID } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { CompactEncrypt, compactDecrypt } from 'jose';
import { cardNumber } from '../factories/cards';
import { createMerchantWithToken } from '../factories/forwarding-merchants';
import { listenOnLoopback } from '../support/downstream';
import { endedJob, startWorker, stopQueuedSetup, WorkerProcess } from '../support/forward-jobs';
import { expectProblem, http, HttpResult } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Issue 27, item 2 (decision 0103): a `jwe-payload` (Gr4vy `mle`) method holding the merchant's
 * response_private_key has the downstream's encrypted answer decrypted before the response rules, on
 * the synchronous and the queued path. The downstream is a real HTTP server of this test; it decrypts
 * the request and encrypts its answers with jose, to the public halves of keys this test generated,
 * with no code of ours. The private keys are then looked for in every answer, log line and raw row.
 */

const PAN = cardNumber('4', 16);
const MASKED = `${PAN.slice(0, 6)}******${PAN.slice(-4)}`;
const RULES = [{ match: '$.card.number', action: 'mask' }];

/** The downstream's own key pair (the request side's public_key). */
const downstreamKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
/** The merchant's response keys: RSA as PEM, EC P-256 as a JWK. */
const rsaResponse = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ecResponse = generateKeyPairSync('ec', { namedCurve: 'P-256' });
/** A key no method holds: answers encrypted to it cannot be decrypted. */
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });

const rsaPem = rsaResponse.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const ecJwk = ecResponse.privateKey.export({ format: 'jwk' });
const ecJwkText = JSON.stringify(ecJwk);

/** What must never come back: a PEM body line, the JWK's private scalar, a slice of each key's DER. */
const KEY_FRAGMENTS = [
  rsaPem.split('\n')[5],
  ecJwk.d!,
  rsaResponse.privateKey.export({ type: 'pkcs8', format: 'der' }).subarray(100, 140).toString('latin1'),
  ecResponse.privateKey.export({ type: 'pkcs8', format: 'der' }).subarray(30, 62).toString('latin1'),
];

function answerFor(pan: string) {
  return JSON.stringify({ status: 'approved', card: { number: pan }, amount: '10.00' });
}

async function encrypt(plaintext: string, to: KeyObject, alg: string, enc: string, cty?: string): Promise<string> {
  return new CompactEncrypt(Buffer.from(plaintext))
    .setProtectedHeader({ alg, enc, ...(cty ? { cty } : {}) })
    .encrypt(to);
}

/** An MLE PSP: decrypts each request with its key (it must be a JWE), answers by path. */
async function startMlePsp() {
  const received: Array<{ url: string; plaintext: string }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const { plaintext } = await compactDecrypt(Buffer.concat(chunks).toString(), downstreamKeys.privateKey);
        received.push({ url: req.url!, plaintext: Buffer.from(plaintext).toString() });
        const path = req.url!.split('?')[0];
        if (path.startsWith('/compact')) {
          res.writeHead(200, { 'content-type': 'application/jose' });
          res.end(await encrypt(answerFor(PAN), rsaResponse.publicKey, 'RSA-OAEP-256', 'A256GCM', 'application/json'));
        } else if (path.startsWith('/visa')) {
          // Visa's shape: {"encData": "<compact JWE>"}, A128GCM, no cty.
          const encData = await encrypt(answerFor(PAN), rsaResponse.publicKey, 'RSA-OAEP-256', 'A128GCM');
          res.writeHead(200, { 'content-type': 'application/json;charset=UTF-8' });
          res.end(JSON.stringify({ encData }));
        } else if (path.startsWith('/ec')) {
          res.writeHead(201, { 'content-type': 'application/jose' });
          res.end(await encrypt(answerFor(PAN), ecResponse.publicKey, 'ECDH-ES+A256KW', 'A256GCM', 'json'));
        } else if (path.startsWith('/plain')) {
          // An MLE API's error answer: plaintext.
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ errorMessage: 'invalid amount', card: { number: PAN } }));
        } else {
          res.writeHead(200, { 'content-type': 'application/jose' });
          res.end(await encrypt(answerFor(PAN), stranger.publicKey, 'RSA-OAEP-256', 'A256GCM'));
        }
      })().catch((error: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`psp failed: ${error.message}`);
      });
    });
  });
  return {
    ...(await listenOnLoopback(server)),
    received,
  };
}

function expectNoKey(text: string): void {
  for (const fragment of KEY_FRAGMENTS) expect(text).not.toContain(fragment);
}

describe('Encrypted answers of an MLE method (response_private_key)', () => {
  let t: TestApp;
  let psp: Awaited<ReturnType<typeof startMlePsp>>;
  let worker: WorkerProcess;
  let token: string;
  let configId: string;
  let rsaMethod: string;
  let ecMethod: string;
  /** Every answer of ours in this file, to look for the keys in. */
  const answers: string[] = [];
  const env = {
    QUEUE_BACKEND: 'redis',
    FORWARD_QUEUE_NAME: `test-jobs-${randomUUID()}`,
    FORWARD_INSECURE_HOSTS: '127.0.0.1',
  };

  async function call(path: string, init: Parameters<typeof http>[2] = {}): Promise<HttpResult> {
    const result = await http(t.url, path, { token, ...init });
    answers.push(result.text);
    return result;
  }

  function forward(path: string, method: string, headers: Record<string, string> = {}) {
    return call('/vault-forward', {
      method: 'POST',
      headers: {
        'x-vault-forward-url': `${psp.url}${path}`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-authentications': method,
        'content-type': 'application/json',
        ...headers,
      },
      rawBody: '{"amount":"10.00"}',
    });
  }

  const methodFields = (responseKey: string) => ({
    public_key: downstreamKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    algorithm: 'RSA-OAEP-256',
    encryption: 'A256GCM',
    response_private_key: responseKey,
  });

  beforeAll(async () => {
    psp = await startMlePsp();
    t = await startTestApp({ env });
    worker = await startWorker(env);
    ({ token } = await createMerchantWithToken(t));
    const config = await call('/vault-forward/configs', {
      method: 'POST',
      body: { display_name: 'MLE PSP', hosts: [`127.0.0.1:${psp.port}`], methods: ['POST'], response_rules: RULES },
    });
    expect(config.status).toBe(201);
    configId = config.body.id;
    const rsa = await call(`/vault-forward/configs/${configId}/authentications`, {
      method: 'POST',
      body: { kind: 'jwe-payload', label: 'PSP MLE (RSA)', fields: methodFields(rsaPem) },
    });
    expect(rsa.status).toBe(201);
    rsaMethod = rsa.body.id;
    const ec = await call(`/vault-forward/configs/${configId}/authentications`, {
      method: 'POST',
      body: { kind: 'jwe-payload', label: 'PSP MLE (EC JWK)', fields: methodFields(ecJwkText) },
    });
    expect(ec.status).toBe(201);
    ecMethod = ec.body.id;
  }, 120_000);

  afterAll(() => stopQueuedSetup({ env, worker, t, downstream: psp }), 30_000);

  it('answers show that a response key is set (type, size, thumbprint), never the key', async () => {
    const rsa = await call(`/vault-forward/configs/${configId}/authentications/${rsaMethod}`);
    expect(rsa.status).toBe(200);
    expect(rsa.body.fields).not.toHaveProperty('response_private_key');
    expect(rsa.body.details.response_private_key).toEqual({
      type: 'rsa',
      size_bits: 2048,
      public_key_thumbprint: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const ec = await call(`/vault-forward/configs/${configId}/authentications/${ecMethod}`);
    expect(ec.body.details.response_private_key).toMatchObject({ type: 'ec', curve: 'P-256' });
    const list = await call(`/vault-forward/configs/${configId}/authentications`);
    expect(list.status).toBe(200);
    expect(await call(`/vault-forward/configs/${configId}`)).toMatchObject({ status: 200 });
  });

  it('decrypts an application/jose answer before the rules: the caller gets the plaintext with the PAN masked', async () => {
    const result = await forward('/compact', rsaMethod);
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toMatch(/^application\/json/);
    expect(result.body).toEqual({ status: 'approved', card: { number: MASKED }, amount: '10.00' });
    expect(result.text).not.toContain(PAN);
    // The request side still encrypts: the PSP decrypted it with its own key.
    expect(psp.received.find((r) => r.url === '/compact')?.plaintext).toBe('{"amount":"10.00"}');
  });

  it('decrypts Visa’s {"encData": …} answer, and an ECDH-ES answer with an EC JWK key', async () => {
    const visa = await forward('/visa', rsaMethod);
    expect(visa.status).toBe(200);
    expect(visa.body).toEqual({ status: 'approved', card: { number: MASKED }, amount: '10.00' });
    const ec = await forward('/ec', ecMethod);
    expect(ec.status).toBe(201);
    expect(ec.headers.get('content-type')).toBe('application/json');
    expect(ec.body).toEqual({ status: 'approved', card: { number: MASKED }, amount: '10.00' });
  });

  it('passes a plaintext answer on untouched by the decryption (the rules still apply)', async () => {
    const result = await forward('/plain', rsaMethod);
    expect(result.status).toBe(400);
    expect(result.headers.get('x-vault-forward-error')).toBeNull();
    expect(result.body).toEqual({ errorMessage: 'invalid amount', card: { number: MASKED } });
  });

  it('refuses a JWE the key cannot decrypt: 502 response-not-decryptable, ours, no key material', async () => {
    const result = await forward('/stranger', rsaMethod);
    const problem = expectProblem(result, 502, 'response-not-decryptable');
    expect(result.headers.get('x-vault-forward-error')).toBe('true');
    expect(problem.detail).toContain('does not decrypt');
    expect(problem.errors).toEqual([
      { location: 'header', name: 'x-vault-forward-authentications', message: expect.stringContaining(rsaMethod) },
    ]);
    expect(result.text).not.toContain(PAN);
    // Nothing of the JWE (its header, encrypted key, ciphertext) is echoed.
    expect(result.text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
  });

  it('the queued path decrypts before the answer is sealed: the job shows the masked plaintext', async () => {
    const accepted = await forward('/visa?queued', rsaMethod, { prefer: 'respond-async' });
    expect(accepted.status).toBe(202);
    const job = await endedJob(t.url, token, accepted.body.id);
    expect(job.body.status).toBe('succeeded');
    expect(JSON.parse(job.body.response.body)).toEqual({
      status: 'approved',
      card: { number: MASKED },
      amount: '10.00',
    });
    expect(job.text).not.toContain(PAN);
    expect(job.text).not.toContain('encData');

    const refused = await forward('/stranger?queued', rsaMethod, { prefer: 'respond-async' });
    expect(refused.status).toBe(202);
    const failed = await endedJob(t.url, token, refused.body.id);
    expect(failed.body.status).toBe('failed');
    expect(failed.body.attempts.map((a: { error_type: string | null }) => a.error_type)).toEqual([
      'response-not-decryptable',
    ]);
  });

  it('refuses an unusable response key on create and on update: 400 naming fields.response_private_key', async () => {
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey.export({ format: 'jwk' });
    const bad = [
      weak.toString(),
      JSON.stringify(k1),
      downstreamKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n',
      generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    ];
    for (const value of bad) {
      const created = await call(`/vault-forward/configs/${configId}/authentications`, {
        method: 'POST',
        body: { kind: 'jwe-payload', label: 'bad key', fields: methodFields(value) },
      });
      const problem = expectProblem(created, 400, 'validation-failed');
      expect(problem.errors).toEqual([
        { location: 'body', name: 'fields.response_private_key', message: expect.any(String) },
      ]);
      expect(created.text).not.toContain(value.split('\n')[1] ?? value);
    }
    const updated = await call(`/vault-forward/configs/${configId}/authentications/${rsaMethod}`, {
      method: 'PUT',
      body: { fields: methodFields(weak.toString()) },
    });
    expect(updated.status).toBe(400);
    expect(updated.body.errors[0].name).toBe('fields.response_private_key');
    expect(updated.text).not.toContain(weak.toString().split('\n')[1]);
  });

  it('the keys are in no answer, no log line of the API or the worker, and no raw database row in clear', async () => {
    // Its own reads and a forward, then every answer of the file so far (whatever ran before).
    await call(`/vault-forward/configs/${configId}/authentications`);
    await call(`/vault-forward/configs/${configId}/authentications/${rsaMethod}`);
    await call(`/vault-forward/configs/${configId}`);
    expect((await forward('/compact?last', rsaMethod)).status).toBe(200);
    for (const text of answers) expectNoKey(text);
    expectNoKey(t.logs.text);
    expectNoKey(worker.output());
    expect(t.logs.text).not.toContain(PAN);
    const rows = await t.db.query(`SELECT * FROM vault_forward_authentications WHERE config_id = $1`, [configId]);
    expect(rows).toHaveLength(2);
    for (const row of rows as Array<Record<string, unknown>>) {
      expect(Buffer.isBuffer(row.ciphertext) && row.ciphertext.length).toBeGreaterThan(0);
      expect(row.secret_details).toHaveProperty('response_private_key.public_key_thumbprint');
      for (const value of Object.values(row))
        expectNoKey(Buffer.isBuffer(value) ? value.toString('latin1') : JSON.stringify(value));
    }
  });
});
