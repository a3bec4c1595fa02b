import { generateKeyPairSync } from 'node:crypto';
import { Readable } from 'node:stream';
import { CompactEncrypt } from 'jose';
import {
  readResponseKey,
  responseKeyFacts,
} from '../../src/modules/forwarding-setup/authentication-kinds/response-keys';
import { ProblemException } from '../../src/platform/problem/problem';
import type { UsableAuthenticationMethod } from '../../src/modules/forwarding-setup/authentication-methods/forward-authentications.service';
import { MleAnswers } from '../../src/modules/forwarding/answers/mle-answers';
import { RULES_MAX_BYTES } from '../../src/modules/forwarding/answers/response-filter';

/** Decision 0103: the response key's rules, and MleAnswers.open on answers built here with jose. */

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

function method(
  responseKey: string | undefined,
  id = '11111111-1111-4111-8111-111111111111',
): UsableAuthenticationMethod {
  return {
    id,
    configId: 'c',
    kind: 'jwe-payload',
    version: '1',
    fields: {
      public_key: 'x',
      algorithm: 'RSA-OAEP-256',
      encryption: 'A256GCM',
      ...(responseKey ? { response_private_key: responseKey } : {}),
    },
  };
}

const jwe = (plaintext: string, header: Record<string, string> = {}) =>
  new CompactEncrypt(Buffer.from(plaintext))
    .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', ...header })
    .encrypt(rsa.publicKey);

describe('response keys', () => {
  it.each([
    ['RSA 2048 PEM (PKCS#8)', true, pem],
    ['RSA 2048 PEM (PKCS#1)', true, rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()],
    [
      'EC P-384 SEC1',
      true,
      generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString(),
    ],
    [
      'EC P-521 JWK',
      true,
      JSON.stringify(generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey.export({ format: 'jwk' })),
    ],
    [
      'RSA 1024',
      false,
      generateKeyPairSync('rsa', { modulusLength: 1024 })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString(),
    ],
    ['a public JWK', false, JSON.stringify(rsa.publicKey.export({ format: 'jwk' }))],
    [
      'an encrypted PEM',
      false,
      rsa.privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'p' }).toString(),
    ],
    ['X25519', false, generateKeyPairSync('x25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()],
    ['text', false, 'not a key at all, just some text that is long enough'],
  ])('%s → accepted: %s, and a refusal never quotes it', (_, accepted, value) => {
    const read = readResponseKey(value);
    expect('key' in read).toBe(accepted);
    if ('problem' in read) expect(read.problem).not.toContain(value.slice(30, 60));
  });

  it('shows type, size and the RFC 7638 thumbprint of the public half', async () => {
    const read = readResponseKey(pem);
    if (!('key' in read)) throw new Error('refused');
    expect(await responseKeyFacts(read.key)).toEqual({
      type: 'rsa',
      size_bits: 2048,
      public_key_thumbprint: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
  });
});

describe('MleAnswers.open', () => {
  const mle = new MleAnswers();
  const answer = (type: string, body: Buffer | Readable, extra: Record<string, string> = {}) => ({
    status: 200,
    headers: { 'content-type': type, 'content-length': '1', ...extra },
    body,
  });

  it('leaves the answer as it is (the stream itself) when no listed method holds a key', async () => {
    const stream = Readable.from([Buffer.from(await jwe('{}'))]);
    const response = answer('application/jose', stream);
    expect(await mle.open([method(undefined)], response)).toBe(response);
  });

  it('decrypts application/jose, takes cty for the type, and drops content-length', async () => {
    const out = await mle.open(
      [method(pem)],
      answer('application/jose', Buffer.from(await jwe('<a/>', { cty: 'application/xml' }))),
    );
    expect((out.body as Buffer).toString()).toBe('<a/>');
    expect(out.headers).toEqual({ 'content-type': 'application/xml' });
  });

  it('decrypts a streamed {"encData"} answer; without cty, a JSON plaintext is application/json', async () => {
    const body = JSON.stringify({ encData: await jwe('{"a":1}') });
    const out = await mle.open([method(pem)], answer('application/json', Readable.from([Buffer.from(body)])));
    expect((out.body as Buffer).toString()).toBe('{"a":1}');
    expect(out.headers['content-type']).toBe('application/json');
  });

  it('passes what is no JWE: other types untouched (the stream), plaintext JSON and compressed answers as read', async () => {
    const html = answer('text/html', Buffer.from('<p>down</p>'));
    expect(await mle.open([method(pem)], html)).toBe(html);
    const gzip = answer('application/jose', Buffer.from('xx'), { 'content-encoding': 'gzip' });
    expect(await mle.open([method(pem)], gzip)).toBe(gzip);
    const plain = await mle.open(
      [method(pem)],
      answer('application/json', Readable.from([Buffer.from('{"encData":1}')])),
    );
    expect((plain.body as Buffer).toString()).toBe('{"encData":1}');
    expect(plain.headers['content-length']).toBe('1');
  });

  it('tries each listed key in order', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const out = await mle.open(
      [method(other, '22222222-2222-4222-8222-222222222222'), method(pem)],
      answer('application/jose', Buffer.from(await jwe('ok'))),
    );
    expect((out.body as Buffer).toString()).toBe('ok');
  });

  it.each([
    [
      'another key',
      async () =>
        new CompactEncrypt(Buffer.from('x'))
          .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' })
          .encrypt(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey),
      'does not decrypt',
    ],
    [
      'an altered tag',
      async () => {
        const parts = (await jwe('x')).split('.');
        parts[4] = (parts[4][0] === 'A' ? 'B' : 'A') + parts[4].slice(1);
        return parts.join('.');
      },
      'does not decrypt',
    ],
    [
      'alg dir',
      async () =>
        new CompactEncrypt(Buffer.from('x'))
          .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
          .encrypt(new Uint8Array(32)),
      'not one we accept',
    ],
  ])('refuses %s: 502 response-not-decryptable, nothing of the JWE in it', async (_, make, why) => {
    const token = await make();
    const error = await mle
      .open([method(pem)], answer('application/jose', Buffer.from(token)))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProblemException);
    const problem = error as ProblemException;
    expect(problem.definition.code).toBe('response-not-decryptable');
    expect(problem.status).toBe(502);
    const text = JSON.stringify({ detail: problem.message, errors: problem.errors });
    expect(text).toContain(why);
    for (const segment of token.split('.').filter((s) => s.length > 8)) expect(text).not.toContain(segment);
  });

  it('refuses an application/jose answer over 1 MiB without reading the rest: 502 response-too-large-to-decrypt', async () => {
    let pushed = 0;
    const stream = new Readable({
      read() {
        pushed += 64 * 1024;
        this.push(pushed > 4 * RULES_MAX_BYTES ? null : Buffer.alloc(64 * 1024, 0x41));
      },
    });
    const error = await mle.open([method(pem)], answer('application/jose', stream)).catch((e: unknown) => e);
    expect((error as ProblemException).definition.code).toBe('response-too-large-to-decrypt');
    expect(pushed).toBeLessThan(2 * RULES_MAX_BYTES);
    expect(stream.destroyed).toBe(true);
  });
});
