import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { promisify } from 'node:util';
import { generate } from 'selfsigned';
import { ProblemException } from '../../src/platform/problem/problem';
import {
  ForwardAuthenticationsService,
  UsableAuthenticationMethod,
} from '../../src/modules/forwarding-setup/authentication-methods/forward-authentications.service';
import { AUTHENTICATION_KINDS, KINDS } from '../../src/modules/forwarding-setup/authentication-kinds/kinds';
import { KeyRotationService } from '../../src/modules/vault/key-rotation.service';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectProblem, http } from '../support/http';
import { createIsolatedDatabase } from '../support/isolated-database';
import { startTestApp, TEST_MASTER_KEY_1, TEST_MASTER_KEY_2, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

const run = promisify(execFile);
const DAY = 24 * 3600_000;

/** Secrets distinctive enough to be searched for in rows, dumps and logs. */
const HMAC_SECRET = 'hmac-SECRET-4f1d2c-do-not-leak\n';
const PASSPHRASE = 'passphrase-SECRET-9a8b7c';
const secretsSeen = new Set<string>([HMAC_SECRET.trimEnd(), PASSPHRASE]);

async function certificate(days: { from: number; to: number }, options: { passphrase?: string } = {}) {
  const now = Date.now();
  const pems = await generate([{ name: 'commonName', value: 'client.merchant.example' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate: new Date(now + days.from * DAY),
    notAfterDate: new Date(now + days.to * DAY),
    ...(options.passphrase ? { passphrase: options.passphrase } : {}),
  });
  // The base64 body of a private key: what would show if it leaked anywhere.
  secretsSeen.add(pems.private.split('\n')[1]);
  return { cert: pems.cert, key: pems.private };
}

function problemOf(error: unknown): {
  code: string;
  status: number;
  detail: string;
  errors?: Array<{ location: string; name: string; message: string }>;
} {
  expect(error).toBeInstanceOf(ProblemException);
  const problem = error as ProblemException;
  return {
    code: problem.definition.code,
    status: problem.definition.status,
    detail: problem.detail,
    errors: problem.errors,
  };
}

async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    return problemOf(error);
  }
  throw new Error('expected a problem');
}

describe('Authentication methods (issue 10: resource, kinds, sealing, forForward)', () => {
  let t: TestApp;
  let merchant: string;
  let token: string;
  let configId: string;
  const apps: TestApp[] = [];

  const methodsPath = (config = configId) => `/vault-forward/configs/${config}/authentications`;
  const create = (body: unknown, config = configId, tok = token) =>
    http(t.url, methodsPath(config), { method: 'POST', token: tok, body });
  const hmac = (overrides: Record<string, string> = {}) => ({
    kind: 'hmac-signature',
    label: 'PSP signing',
    fields: { secret: HMAC_SECRET, algorithm: 'sha256', encoding: 'hex', header: 'x-signature', ...overrides },
  });
  const newConfig = async (tok = token) =>
    (
      await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token: tok,
        body: { display_name: 'PSP', hosts: ['psp.example'] },
      })
    ).body.id as string;
  const service = (app = t) => app.get(ForwardAuthenticationsService);

  beforeAll(async () => {
    t = await startTestApp();
    apps.push(t);
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    configId = await newConfig();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
  });
  // After each test, not in a last test of its own: a test run alone (-t) or in another order checks
  // the logs it wrote against the secrets it used.
  afterEach(() => {
    expect(t.logs.text.length).toBeGreaterThan(0);
    for (const app of apps) for (const secret of secretsSeen) expect(app.logs.text).not.toContain(secret);
  });

  it('creates, gets, lists, replaces and deletes a method; secrets never come back', async () => {
    const created = await create({ ...hmac({ prefix: 'sha256=', template: '{method} {path}\n{timestamp}.{body}' }) });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      type: 'vault-forward-authentication',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      config_id: configId,
      merchant_account_id: merchant,
      kind: 'hmac-signature',
      label: 'PSP signing',
      fields: {
        algorithm: 'sha256',
        encoding: 'hex',
        header: 'x-signature',
        prefix: 'sha256=',
        template: '{method} {path}\n{timestamp}.{body}',
      },
      details: {},
      warnings: [{ code: 'secret-trailing-whitespace', field: 'secret', message: expect.any(String) }],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(created.text).not.toContain('hmac-SECRET');
    const id = created.body.id as string;
    expect((await http(t.url, `${methodsPath()}/${id}`, { token })).body).toEqual(created.body);

    // The shared pagination: newest first, cursors.
    const second = (await create({ ...hmac(), label: 'second' })).body.id;
    const page = await http(t.url, `${methodsPath()}?limit=1`, { token });
    expect(page.body).toMatchObject({ limit: 1, previous_cursor: null, items: [{ id: second }] });
    const next = await http(t.url, `${methodsPath()}?limit=1&cursor=${encodeURIComponent(page.body.next_cursor)}`, {
      token,
    });
    expect(next.body.items.map((m: { id: string }) => m.id)).toEqual([id]);

    // PUT label only keeps the fields; PUT fields replaces the whole set (prefix and template gone).
    const before = await service().forForward(merchant, configId, [id]);
    const renamed = await http(t.url, `${methodsPath()}/${id}`, { method: 'PUT', token, body: { label: 'renamed' } });
    expect(renamed.body).toMatchObject({ label: 'renamed', fields: created.body.fields });
    const replaced = await http(t.url, `${methodsPath()}/${id}`, {
      method: 'PUT',
      token,
      body: { fields: { secret: 'hmac-SECRET-second', algorithm: 'sha512', encoding: 'base64', header: 'x-sig' } },
    });
    secretsSeen.add('hmac-SECRET-second');
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      label: 'renamed',
      fields: { algorithm: 'sha512', encoding: 'base64', header: 'x-sig' },
      warnings: [],
    });
    expect(Object.keys(replaced.body.fields).sort()).toEqual(['algorithm', 'encoding', 'header']);
    const after = await service().forForward(merchant, configId, [id]);
    expect(after[0].fields).toEqual({
      secret: 'hmac-SECRET-second',
      algorithm: 'sha512',
      encoding: 'base64',
      header: 'x-sig',
    });
    expect(after[0].version).not.toBe(before[0].version);

    // No partial merge: a fields set without the secret is refused, naming it.
    const partial = expectProblem(
      await http(t.url, `${methodsPath()}/${id}`, { method: 'PUT', token, body: { fields: { algorithm: 'sha256' } } }),
      400,
      'validation-failed',
    );
    expect(partial.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'fields.secret', message: 'is required' })]),
    );
    expectProblem(
      await http(t.url, `${methodsPath()}/${id}`, { method: 'PUT', token, body: { kind: 'mutual-tls' } }),
      400,
      'validation-failed',
    );

    expect((await http(t.url, `${methodsPath()}/${id}`, { method: 'DELETE', token })).status).toBe(204);
    expectProblem(
      await http(t.url, `${methodsPath()}/${id}`, { token }),
      404,
      'vault-forward-authentication-not-found',
    );
    expectProblem(
      await http(t.url, `${methodsPath()}/${id}`, { method: 'DELETE', token }),
      404,
      'vault-forward-authentication-not-found',
    );
  });

  it('needs the vault-forward-authentications scopes', async () => {
    const key = await createApiKey(t, merchant);
    const readOnly = await key.token(['vault-forward-authentications.read']);
    const configsOnly = await key.token(['vault-forward-configs.read', 'vault-forward-configs.write']);
    expect((await http(t.url, methodsPath(), { token: readOnly })).status).toBe(200);
    expectProblem(await create(hmac(), configId, readOnly), 403, 'forbidden');
    expectProblem(await create(hmac(), configId, configsOnly), 403, 'forbidden');
    expectProblem(await http(t.url, methodsPath(), { token: configsOnly }), 403, 'forbidden');
    expect((await create(hmac(), configId, await key.token(['vault-forward-authentications.write']))).status).toBe(201);
    expectProblem(await http(t.url, methodsPath()), 401, 'unauthorized');
  });

  it('PUT and DELETE of a method need vault-forward-authentications.write: read alone is 403 and changes nothing', async () => {
    const key = await createApiKey(t, merchant);
    const readOnly = await key.token(['vault-forward-authentications.read']);
    const write = await key.token(['vault-forward-authentications.write']);
    const id = (await create(hmac())).body.id as string;
    const path = `${methodsPath()}/${id}`;
    expectProblem(
      await http(t.url, path, { method: 'PUT', token: readOnly, body: { label: 'renamed' } }),
      403,
      'forbidden',
    );
    expectProblem(await http(t.url, path, { method: 'DELETE', token: readOnly }), 403, 'forbidden');
    const unchanged = await http(t.url, path, { token: readOnly });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.label).not.toBe('renamed');
    // The same requests with the write scope go through, so the 403s above were the scope's.
    const renamed = await http(t.url, path, { method: 'PUT', token: write, body: { label: 'renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.label).toBe('renamed');
    expect((await http(t.url, path, { method: 'DELETE', token: write })).status).toBe(204);
  });

  it('answers 404 for another merchant’s config or method', async () => {
    const mine = (await create(hmac())).body.id as string;
    const otherMerchant = (await createMerchantAccount(t)).id;
    const other = await (await createApiKey(t, otherMerchant)).token();
    const theirConfig = await newConfig(other);
    // Their token on my config: the config does not exist for them.
    for (const [method, path, body] of [
      ['GET', methodsPath(), undefined],
      ['POST', methodsPath(), hmac()],
      ['GET', `${methodsPath()}/${mine}`, undefined],
      ['PUT', `${methodsPath()}/${mine}`, { label: 'x' }],
      ['DELETE', `${methodsPath()}/${mine}`, undefined],
    ] as const) {
      expectProblem(await http(t.url, path, { method, token: other, body }), 404, 'vault-forward-config-not-found');
    }
    // My method under their config, with their token: not there either.
    expectProblem(
      await http(t.url, `${methodsPath(theirConfig)}/${mine}`, { token: other }),
      404,
      'vault-forward-authentication-not-found',
    );
    // My method under another config of mine.
    const myOtherConfig = await newConfig();
    expectProblem(
      await http(t.url, `${methodsPath(myOtherConfig)}/${mine}`, { token }),
      404,
      'vault-forward-authentication-not-found',
    );
    expect((await http(t.url, `${methodsPath()}/${mine}`, { token })).status).toBe(200);
  });

  it.each([
    [{ kind: 'basic-auth', label: 'x', fields: {} }, 'kind'],
    [{ kind: 'hmac-signature', label: '', fields: hmac().fields }, 'label'],
    [{ ...hmac(), fields: 'secret' }, 'fields'],
    [hmac({ algorithm: 'SHA256' }), 'fields.algorithm'],
    [hmac({ encoding: 'base64url' }), 'fields.encoding'],
    [hmac({ header: 'x signature' }), 'fields.header'],
    [hmac({ header: 'content-length' }), 'fields.header'],
    [hmac({ template: '{timestamp}.{payload}' }), 'fields.template'],
    [hmac({ template: '{timestamp' }), 'fields.template'],
    [hmac({ prefix: 'sha256=\r\n' }), 'fields.prefix'],
    [hmac({ timestamp_header: '' }), 'fields.timestamp_header'],
    [hmac({ secret: '' }), 'fields.secret'],
    [hmac({ colour: 'blue' }), 'fields.colour'],
    [
      { kind: 'hmac-signature', label: 'x', fields: { secret: 's', encoding: 'hex', header: 'x-s' } },
      'fields.algorithm',
    ],
    [{ kind: 'hmac-signature', label: 'x', fields: { ...hmac().fields, algorithm: 256 } }, 'fields.algorithm'],
    [
      {
        kind: 'jwe-payload',
        label: 'x',
        fields: {
          public_key: '{"kty":"RSA","n":"x","e":"AQAB","d":"SECRET-d"}',
          algorithm: 'RSA-OAEP-256',
          encryption: 'A256GCM',
        },
      },
      'fields.public_key',
    ],
    [
      { kind: 'jwe-payload', label: 'x', fields: { public_key: 'k', algorithm: 'RSA-OAEP', encryption: 'A256GCM' } },
      'fields.algorithm',
    ],
  ])('refuses bad input #%# naming the field, without echoing values', async (body, name) => {
    const problem = expectProblem(await create(body), 400, 'validation-failed');
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ location: 'body', name })]));
    expect(JSON.stringify(problem)).not.toContain('SECRET');
  });

  it('refuses a private key pasted into a field that is returned (certificate)', async () => {
    const { cert, key } = await certificate({ from: -1, to: 365 });
    const problem = expectProblem(
      await create({ kind: 'mutual-tls', label: 'x', fields: { certificate: cert + key, private_key: key } }),
      400,
      'validation-failed',
    );
    expect(problem.errors).toEqual([expect.objectContaining({ name: 'fields.certificate' })]);
    expect(JSON.stringify(problem)).not.toContain(key.split('\n')[1]);
  });

  it('stores values as entered and warns: trailing newline, expired or expiring certificate, mismatched key, unparsable PEM', async () => {
    // A secret ending in a newline is kept, newline included, and the answer says so.
    const withNewline = (await create(hmac())).body;
    expect(withNewline.warnings.map((w: { code: string }) => w.code)).toEqual(['secret-trailing-whitespace']);
    expect((await service().forForward(merchant, configId, [withNewline.id]))[0].fields.secret).toBe(HMAC_SECRET);

    const valid = await certificate({ from: -1, to: 365 }, { passphrase: PASSPHRASE });
    const ok = await create({
      kind: 'mutual-tls',
      label: 'good',
      fields: { certificate: valid.cert, private_key: valid.key, passphrase: PASSPHRASE },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.warnings).toEqual([]);
    expect(ok.body.fields).toEqual({ certificate: valid.cert });
    expect(ok.body.details.certificates).toEqual([
      expect.objectContaining({
        subject: expect.stringContaining('client.merchant.example'),
        issuer: expect.any(String),
        not_after: expect.any(String),
        fingerprint_sha256: expect.stringMatching(/^[0-9A-F:]+$/),
      }),
    ]);

    const expired = await certificate({ from: -400, to: -10 });
    const expiredAnswer = await create({
      kind: 'mutual-tls',
      label: 'expired',
      fields: { certificate: expired.cert, private_key: expired.key },
    });
    expect(expiredAnswer.body.warnings.map((w: { code: string }) => w.code)).toEqual(['certificate-expired']);

    const soon = await certificate({ from: -300, to: 10 });
    const soonAnswer = await create({
      kind: 'mutual-tls',
      label: 'soon',
      fields: { certificate: soon.cert, private_key: soon.key },
    });
    expect(soonAnswer.body.warnings.map((w: { code: string }) => w.code)).toEqual(['certificate-expires-soon']);

    const mismatched = await create({
      kind: 'mutual-tls',
      label: 'mismatch',
      fields: { certificate: valid.cert, private_key: expired.key },
    });
    expect(mismatched.body.warnings.map((w: { code: string }) => w.code)).toEqual(['private-key-mismatch']);

    const wrongPassphrase = await create({
      kind: 'mutual-tls',
      label: 'pass',
      fields: { certificate: valid.cert, private_key: valid.key, passphrase: 'nope' },
    });
    expect(wrongPassphrase.body.warnings).toEqual([
      expect.objectContaining({ code: 'pem-unparseable', field: 'private_key' }),
    ]);

    const garbage = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n';
    const unparseable = await create({
      kind: 'mutual-tls',
      label: 'garbage',
      fields: { certificate: garbage, private_key: 'not a key' },
    });
    expect(unparseable.status).toBe(201);
    expect(unparseable.body.fields.certificate).toBe(garbage);
    expect(
      unparseable.body.warnings.map((w: { code: string; field: string }) => `${w.code}:${w.field}`).sort(),
    ).toEqual(['pem-unparseable:certificate', 'pem-unparseable:private_key']);

    // jwe-payload: a PEM and a JWK both parse; a key unfit for the algorithm, or text that is no key, warns.
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const jwk = JSON.stringify(rsa.publicKey.export({ format: 'jwk' }));
    for (const public_key of [pem, jwk]) {
      const answer = await create({
        kind: 'jwe-payload',
        label: 'jwe',
        fields: { public_key, algorithm: 'RSA-OAEP-256', encryption: 'A256GCM', key_id: 'k1' },
      });
      expect(answer.body).toMatchObject({
        warnings: [],
        fields: { public_key, key_id: 'k1' },
        details: { public_key: { type: 'rsa', size_bits: 2048 } },
      });
    }
    const unfit = await create({
      kind: 'jwe-payload',
      label: 'jwe',
      fields: { public_key: pem, algorithm: 'ECDH-ES+A256KW', encryption: 'A256GCM' },
    });
    expect(unfit.body.warnings.map((w: { code: string }) => w.code)).toEqual(['public-key-algorithm-mismatch']);
    const notAKey = await create({
      kind: 'jwe-payload',
      label: 'jwe',
      fields: { public_key: 'hello', algorithm: 'RSA-OAEP-256', encryption: 'A128CBC-HS256' },
    });
    expect(notAKey.body.warnings.map((w: { code: string }) => w.code)).toEqual(['public-key-unparseable']);
  });

  it('forForward: in order, this merchant’s methods of this config only, each once, one mutual-tls; problems name header, id', async () => {
    const { cert, key } = await certificate({ from: -1, to: 365 });
    const mtls = (label: string) =>
      create({ kind: 'mutual-tls', label, fields: { certificate: cert, private_key: key } });
    const sign = (await create(hmac())).body.id as string;
    const tls1 = (await mtls('one')).body.id as string;
    const tls2 = (await mtls('two')).body.id as string;
    const otherConfig = await newConfig();
    const foreignConfigMethod = (await create(hmac(), otherConfig)).body.id as string;
    const otherMerchant = (await createMerchantAccount(t)).id;
    const otherToken = await (await createApiKey(t, otherMerchant)).token();
    const otherMerchantMethod = (await create(hmac(), await newConfig(otherToken), otherToken)).body.id as string;

    const usable: UsableAuthenticationMethod[] = await service().forForward(merchant, configId, [
      tls1,
      sign.toUpperCase(),
    ]);
    expect(usable.map((m) => [m.id, m.kind, m.configId])).toEqual([
      [tls1, 'mutual-tls', configId],
      [sign, 'hmac-signature', configId],
    ]);
    expect(usable[0].fields).toEqual({ certificate: cert, private_key: key });
    expect(Object.isFrozen(usable[1].fields)).toBe(true);
    expect(await service().forForward(merchant, configId, [])).toEqual([]);

    const cases: Array<[string[], string, number, string]> = [
      [[sign, otherMerchantMethod], 'authentication-method-not-usable', 422, otherMerchantMethod],
      [[foreignConfigMethod], 'authentication-method-not-usable', 422, foreignConfigMethod],
      [
        ['00000000-0000-4000-8000-000000000000'],
        'authentication-method-not-usable',
        422,
        '00000000-0000-4000-8000-000000000000',
      ],
      [[sign, sign], 'authentication-methods-conflict', 422, sign],
      [[tls1, sign, tls2], 'authentication-methods-conflict', 422, tls2],
    ];
    for (const [ids, code, status, named] of cases) {
      const problem = await refusal(service().forForward(merchant, configId, ids));
      expect(problem).toMatchObject({ code, status });
      expect(problem.detail).toContain(named);
      expect(problem.errors).toEqual([
        { location: 'header', name: 'x-vault-forward-authentications', message: expect.stringContaining(named) },
      ]);
      expect(JSON.stringify(problem)).not.toContain('SECRET');
    }

    // A deleted method is refused at once, although it was just cached.
    await service().forForward(merchant, configId, [sign]);
    expect((await http(t.url, `${methodsPath()}/${sign}`, { method: 'DELETE', token })).status).toBe(204);
    expect(await refusal(service().forForward(merchant, configId, [sign]))).toMatchObject({
      code: 'authentication-method-not-usable',
    });

    // Secrets that do not decrypt (another method's ciphertext moved onto this row) fail naming the id only.
    const victim = (await mtls('victim')).body.id as string;
    await t.db.query(
      `UPDATE vault_forward_authentications t SET ciphertext = s.ciphertext, wrapped_key = s.wrapped_key FROM ` +
        `vault_forward_authentications s WHERE s.id = $1 AND t.id = $2`,
      [tls1, victim],
    );
    const unreadable = await refusal(service().forForward(merchant, configId, [victim]));
    expect(unreadable).toMatchObject({ code: 'authentication-method-unreadable', status: 500 });
    expect(unreadable.detail).toContain(victim);
  });

  it('every process drops a changed method from its caches and tells the listeners', async () => {
    const other = await startTestApp();
    apps.push(other);
    const id = (await create(hmac({ secret: 'hmac-SECRET-v1' }))).body.id as string;
    secretsSeen.add('hmac-SECRET-v1').add('hmac-SECRET-v2');
    // The other process caches the method (sealed row and opened fields).
    expect((await service(other).forForward(merchant, configId, [id]))[0].fields.secret).toBe('hmac-SECRET-v1');
    const changed: Array<string | null> = [];
    const unsubscribe = service(other).onMethodChanged((methodId) => changed.push(methodId));
    await http(t.url, `${methodsPath()}/${id}`, {
      method: 'PUT',
      token,
      body: { fields: { ...hmac().fields, secret: 'hmac-SECRET-v2' } },
    });
    await waitFor(() => changed.includes(id), { what: 'the change notice in the other process' });
    expect((await service(other).forForward(merchant, configId, [id]))[0].fields.secret).toBe('hmac-SECRET-v2');
    await http(t.url, `${methodsPath()}/${id}`, { method: 'DELETE', token });
    await waitFor(() => changed.filter((c) => c === id).length === 2, { what: 'the delete notice' });
    expect(await refusal(service(other).forForward(merchant, configId, [id]))).toMatchObject({
      code: 'authentication-method-not-usable',
    });
    unsubscribe();
  });

  it('deleting a config deletes its methods', async () => {
    const config = await newConfig();
    const id = (await create(hmac(), config)).body.id as string;
    expect((await http(t.url, `/vault-forward/configs/${config}`, { method: 'DELETE', token })).status).toBe(204);
    expect(await t.db.query('SELECT id FROM vault_forward_authentications WHERE id = $1', [id])).toEqual([]);
  });

  it('serves the kind descriptions, and OpenAPI documents one schema per kind (request and response, oneOf by kind)', async () => {
    expectProblem(await http(t.url, '/vault-forward/authentication-kinds'), 401, 'unauthorized');
    const kinds = await http(t.url, '/vault-forward/authentication-kinds', {
      token: await (await createApiKey(t, merchant)).token(['vault-forward-authentications.read']),
    });
    expect(kinds.status).toBe(200);
    expect(kinds.body.items.map((k: { kind: string }) => k.kind)).toEqual([...AUTHENTICATION_KINDS]);
    for (const item of kinds.body.items as Array<{
      kind: keyof typeof KINDS;
      fields: Array<{ name: string; secret: boolean; required: boolean }>;
    }>) {
      expect(item.fields.map((f) => [f.name, f.secret, f.required])).toEqual(
        KINDS[item.kind].fields.map((f) => [f.name, f.secret, f.required]),
      );
    }
    expect(
      kinds.body.items[0].fields.filter((f: { secret: boolean }) => f.secret).map((f: { name: string }) => f.name),
    ).toEqual(['secret']);

    const doc = (await http(t.url, '/openapi.json')).body;
    const schemas = doc.components.schemas;
    const post = doc.paths['/vault-forward/configs/{config_id}/authentications'].post;
    expect(post['x-required-scope']).toBe('vault-forward-authentications.write');
    const body = post.requestBody.content['application/json'].schema;
    expect(body.discriminator.propertyName).toBe('kind');
    // One per kind of ours, and Gr4vy's shape (issue 22, item 3) for its three kinds.
    expect(body.oneOf).toHaveLength(AUTHENTICATION_KINDS.length + 1);
    const created = post.responses['201'].content['application/json'].schema;
    expect(created.oneOf).toHaveLength(AUTHENTICATION_KINDS.length + 1);
    for (const kind of ['mle', 'mtls', 'signature']) {
      expect(body.discriminator.mapping[kind]).toBe('#/components/schemas/ForwardAuthenticationGr4vyRequest');
      expect(created.discriminator.mapping[kind]).toBe('#/components/schemas/ForwardAuthenticationGr4vyResponse');
    }
    for (const kind of AUTHENTICATION_KINDS) {
      const request = schemas[body.discriminator.mapping[kind].split('/').pop()];
      const response = schemas[created.discriminator.mapping[kind].split('/').pop()];
      expect(request.properties.kind.enum).toEqual([kind]);
      const fields = KINDS[kind].fields;
      expect(Object.keys(request.properties.fields.properties)).toEqual(fields.map((f) => f.name));
      expect(request.properties.fields.required).toEqual(fields.filter((f) => f.required).map((f) => f.name));
      for (const f of fields.filter((f) => f.secret))
        expect(request.properties.fields.properties[f.name].writeOnly).toBe(true);
      expect(Object.keys(response.properties.fields.properties)).toEqual(
        fields.filter((f) => !f.secret).map((f) => f.name),
      );
    }
    for (const path of ['/vault-forward/configs/{config_id}/authentications/{id}']) {
      expect(doc.paths[path].get['x-required-scope']).toBe('vault-forward-authentications.read');
      expect(doc.paths[path].put['x-required-scope']).toBe('vault-forward-authentications.write');
      expect(doc.paths[path].delete['x-required-scope']).toBe('vault-forward-authentications.write');
    }
  });

  it('raw rows and a pg_dump of the table hold no secret', async () => {
    const { cert, key } = await certificate({ from: -1, to: 365 }, { passphrase: PASSPHRASE });
    await create({
      kind: 'mutual-tls',
      label: 'dumped',
      fields: { certificate: cert, private_key: key, passphrase: PASSPHRASE },
    });
    await create(hmac());
    const rows = JSON.stringify(
      await t.db.query(
        `SELECT *, encode(ciphertext, 'escape') AS c, encode(wrapped_key, 'escape') AS w FROM vault_forward_authentications`,
      ),
    );
    const database = process.env.TEST_DATABASE_NAME ?? new URL(process.env.TEST_DATABASE_URL!).pathname.slice(1);
    const dump = (
      await run(
        'pg_dump',
        ['-h', '127.0.0.1', '-U', 'postgres', '--data-only', '-t', 'vault_forward_authentications', database],
        { maxBuffer: 64 * 1024 * 1024 },
      )
    ).stdout;
    expect(dump).toContain('COPY public.vault_forward_authentications');
    expect(dump).toContain('-----BEGIN CERTIFICATE-----');
    for (const secret of secretsSeen) {
      const hex = Buffer.from(secret, 'utf8').toString('hex');
      for (const text of [rows, dump]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(hex);
      }
    }
  });

  it('rotate-keys re-wraps methods with the other sealed tables; they open with the new key alone', async () => {
    const own = await createIsolatedDatabase('rotate_methods');
    const old = await startTestApp({ env: { DATABASE_URL: own.url } });
    apps.push(old);
    const m = (await createMerchantAccount(old)).id;
    const tok = await (await createApiKey(old, m)).token();
    const config = (
      await http(old.url, '/vault-forward/configs', {
        method: 'POST',
        token: tok,
        body: { display_name: 'PSP', hosts: ['psp.example'] },
      })
    ).body.id as string;
    const made = async (secret: string) =>
      (
        await http(old.url, `/vault-forward/configs/${config}/authentications`, {
          method: 'POST',
          token: tok,
          body: hmac({ secret }),
        })
      ).body.id as string;
    const ids = [await made('hmac-SECRET-r1'), await made('hmac-SECRET-r2'), await made('hmac-SECRET-r3')];
    secretsSeen.add('hmac-SECRET-r1').add('hmac-SECRET-r2').add('hmac-SECRET-r3');
    const tampered = await made('hmac-SECRET-r4');
    await old.db.query(
      `UPDATE vault_forward_authentications t SET ciphertext = s.ciphertext, wrapped_key = s.wrapped_key FROM ` +
        `vault_forward_authentications s WHERE s.id = $1 AND t.id = $2`,
      [ids[0], tampered],
    );
    const both = await startTestApp({
      env: { DATABASE_URL: own.url, VAULT_MASTER_KEYS: `${TEST_MASTER_KEY_2},${TEST_MASTER_KEY_1}` },
    });
    apps.push(both);
    const first = await both.get(KeyRotationService).rotate(2);
    expect(first).toMatchObject({
      master_key_id: 'test-k2',
      rewrapped_authentication_methods: 3,
      failed_authentication_methods: [tampered],
      rewrapped_merchant_keys: 0,
      remaining: 1,
    });
    expect(
      (await old.db.query(`SELECT id FROM vault_forward_authentications WHERE master_key_id <> 'test-k2'`)).map(
        (r: { id: string }) => r.id,
      ),
    ).toEqual([tampered]);
    const onlyNew = await startTestApp({ env: { DATABASE_URL: own.url, VAULT_MASTER_KEYS: TEST_MASTER_KEY_2 } });
    apps.push(onlyNew);
    const opened = await onlyNew.get(ForwardAuthenticationsService).forForward(m, config, ids);
    expect(opened.map((o) => o.fields.secret)).toEqual(['hmac-SECRET-r1', 'hmac-SECRET-r2', 'hmac-SECRET-r3']);
    for (const app of [old, both, onlyNew]) await app.close();
    apps.splice(apps.indexOf(old), 3);
    for (const app of [old, both, onlyNew]) expect(app.logs.text).not.toContain('hmac-SECRET');
    await own.drop();
  });
});
