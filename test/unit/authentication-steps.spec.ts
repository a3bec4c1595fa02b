import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { compactDecrypt, importJWK } from 'jose';
import { ProblemException } from '../../src/platform/problem/problem';
import { AuthenticationSteps, parseTemplate } from '../../src/modules/forwarding/sending/authentication-steps';
import { connectOptions, DispatcherPool } from '../../src/modules/forwarding/sending/dispatcher-pool';
import type { ClientIdentity, OutboundRequest } from '../../src/modules/forwarding/sending/outbound-request';
import type { UsableAuthenticationMethod } from '../../src/modules/forwarding-setup/authentication-methods/forward-authentications.service';
import { guardedLookup } from '../../src/modules/forwarding-setup/targets/addresses';
import { openBraces } from '../support/hostile-inputs';
import { decryptRsaOaepA256Gcm, hmac, sha256Hex } from '../support/independent-crypto';

const NOW = 1_800_000_000_123;

function request(body = '{"card":"4111111111111111"}'): OutboundRequest {
  return {
    url: new URL('https://api.example/v1/charge?x=1'),
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(body),
    timeoutMs: 30_000,
    trusted: false,
    identity: null,
  };
}

function method(
  kind: UsableAuthenticationMethod['kind'],
  fields: Record<string, string>,
  version = '1',
): UsableAuthenticationMethod {
  return { id: randomUUID(), configId: randomUUID(), kind, version, fields };
}

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;

describe('authentication steps', () => {
  const steps = new AuthenticationSteps();

  it('hmac-signature: default template, secret used byte for byte (trailing newline included)', async () => {
    const secret = 'whsec_abc\n';
    const m = method('hmac-signature', {
      secret,
      algorithm: 'sha256',
      encoding: 'hex',
      header: 'X-Signature',
      timestamp_header: 'X-Timestamp',
      prefix: 'sha256=',
    });
    const out = await steps.apply(request(), [m], NOW);
    const ts = String(Math.floor(NOW / 1000));
    expect(out.headers['x-timestamp']).toBe(ts);
    expect(out.headers['x-signature']).toBe(`sha256=${hmac('sha256', secret, [`${ts}.`, out.body!], 'hex')}`);
    expect(out.headers['x-signature']).not.toBe(`sha256=${hmac('sha256', 'whsec_abc', [`${ts}.`, out.body!], 'hex')}`);
  });

  it('hmac-signature: every substitution, sha512 base64, unknown braces literal', async () => {
    const m = method('hmac-signature', {
      secret: 's',
      algorithm: 'sha512',
      encoding: 'base64',
      header: 'sig',
      template: '{method} {path}\n{timestamp}|{body_sha256}|{nope}|{body}',
    });
    const out = await steps.apply(request(), [m], NOW);
    const body = out.body!;
    const expected = hmac(
      'sha512',
      's',
      [`POST /v1/charge?x=1\n${Math.floor(NOW / 1000)}|${sha256Hex(body)}|{nope}|`, body],
      'base64',
    );
    expect(out.headers.sig).toBe(expected);
  });

  // Its CPU, a quarter against the whole, is measured by `npm run bench:linear`.
  it('parseTemplate reads a run of unclosed braces as text', () => {
    expect(parseTemplate(openBraces(50_000))).toEqual([Buffer.from(openBraces(50_000))]);
  });

  it('jwe-payload: body becomes a compact JWE a downstream decrypts with node:crypto; header alg/enc/kid/cty', async () => {
    const m = method('jwe-payload', {
      public_key: rsaPem,
      key_id: 'k-1',
      algorithm: 'RSA-OAEP-256',
      encryption: 'A256GCM',
      content_type: 'application/json',
    });
    const before = request();
    const out = await steps.apply(before, [m], NOW);
    expect(out.headers['content-type']).toBe('application/jose');
    const { header, plaintext } = decryptRsaOaepA256Gcm(out.body!.toString('latin1'), rsa.privateKey);
    expect(header).toEqual({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: 'k-1', cty: 'application/json' });
    expect(plaintext.equals(before.body!)).toBe(true);
  });

  it('jwe-payload: ECDH-ES+A256KW with a JWK, A128CBC-HS256 (decrypted with jose)', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = JSON.stringify(ec.publicKey.export({ format: 'jwk' }));
    const m = method('jwe-payload', { public_key: jwk, algorithm: 'ECDH-ES+A256KW', encryption: 'A128CBC-HS256' });
    const out = await steps.apply(request('plain'), [m], NOW);
    const privateJwk = await importJWK(ec.privateKey.export({ format: 'jwk' }) as never, 'ECDH-ES+A256KW');
    const { plaintext, protectedHeader } = await compactDecrypt(out.body!.toString('latin1'), privateJwk);
    expect(Buffer.from(plaintext).toString()).toBe('plain');
    expect(protectedHeader).toMatchObject({ alg: 'ECDH-ES+A256KW', enc: 'A128CBC-HS256' });
    expect(protectedHeader.kid).toBeUndefined();
  });

  it('order: jwe then hmac signs the JWE; hmac then jwe encrypts the signed body', async () => {
    const jwe = method('jwe-payload', { public_key: rsaPem, algorithm: 'RSA-OAEP-256', encryption: 'A256GCM' });
    const sig = method('hmac-signature', {
      secret: 'k',
      algorithm: 'sha256',
      encoding: 'hex',
      header: 'x-sig',
      template: '{body}',
    });
    const encryptThenSign = await steps.apply(request(), [jwe, sig], NOW);
    expect(encryptThenSign.headers['x-sig']).toBe(hmac('sha256', 'k', [encryptThenSign.body!], 'hex'));

    const signThenEncrypt = await steps.apply(request(), [sig, jwe], NOW);
    const { plaintext } = decryptRsaOaepA256Gcm(signThenEncrypt.body!.toString('latin1'), rsa.privateKey);
    expect(signThenEncrypt.headers['x-sig']).toBe(hmac('sha256', 'k', [plaintext], 'hex'));
    expect(signThenEncrypt.headers['x-sig']).not.toBe(hmac('sha256', 'k', [signThenEncrypt.body!], 'hex'));
  });

  it.each([
    [
      'jwe-payload',
      {
        public_key: '-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n',
        algorithm: 'RSA-OAEP-256',
        encryption: 'A256GCM',
      },
    ],
    ['jwe-payload', { public_key: rsaPem, algorithm: 'ECDH-ES+A256KW', encryption: 'A256GCM' }],
    ['mutual-tls', { certificate: 'not a pem', private_key: 'secret-key-material' }],
  ] as const)('%s that cannot be used → 422 naming the id, no field value in the problem', async (kind, fields) => {
    const m = method(kind, fields);
    const error = await steps.apply(request(), [m], NOW).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProblemException);
    const problem = error as ProblemException;
    expect(problem.status).toBe(422);
    expect(problem.definition.code).toBe('authentication-method-invalid');
    expect(JSON.stringify([problem.detail, problem.errors])).toContain(m.id);
    for (const name of ['public_key', 'private_key', 'certificate'] as const)
      if (name in fields)
        expect(JSON.stringify([problem.detail, problem.errors])).not.toContain(
          (fields as Record<string, string>)[name],
        );
  });
});

describe('dispatcher pool', () => {
  const identity = (methodId: string, version: string): ClientIdentity => ({
    key: `${methodId}@${version}`,
    methodId,
    cert: 'c',
    privateKey: 'k',
    passphrase: undefined,
    ca: undefined,
  });

  it('every guarded connect option set resolves through the SSRF guard, identity or not', () => {
    expect(connectOptions(false, null, undefined).lookup).toBe(guardedLookup);
    expect(connectOptions(false, identity('m', '1'), ['extra']).lookup).toBe(guardedLookup);
    expect(connectOptions(true, identity('m', '1'), undefined).lookup).toBeUndefined();
    expect(connectOptions(false, { ...identity('m', '1'), ca: 'own' }, ['roots']).ca).toBe('own');
  });

  it('one pool per identity and trust; a new version or a drop notice closes the old one', async () => {
    const pool = new DispatcherPool(undefined);
    const a1 = pool.get(false, identity('a', '1'));
    expect(pool.get(false, identity('a', '1'))).toBe(a1);
    expect(pool.get(true, identity('a', '1'))).not.toBe(a1);
    expect(pool.get(false, identity('b', '1'))).not.toBe(a1);
    expect(pool.get(false, null)).not.toBe(a1);
    expect(pool.identityCount()).toBe(3);
    const a2 = pool.get(false, identity('a', '2'));
    expect(a2).not.toBe(a1);
    expect(a1.closed).toBe(true);
    expect(pool.identityCount()).toBe(2);
    pool.dropMethod('b');
    expect(pool.identityCount()).toBe(1);
    await pool.close();
    expect(a2.closed).toBe(true);
  });
});
