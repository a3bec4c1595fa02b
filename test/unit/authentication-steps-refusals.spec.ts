import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { ProblemException } from '../../src/platform/problem/problem';
import type {
  ForwardAuthenticationsService,
  UsableAuthenticationMethod,
} from '../../src/modules/forwarding-setup/authentication-methods/forward-authentications.service';
import { AuthenticationSteps, parseTemplate } from '../../src/modules/forwarding/sending/authentication-steps';
import type { OutboundRequest } from '../../src/modules/forwarding/sending/outbound-request';
import { hmac } from '../support/independent-crypto';
import { TestCa } from '../support/test-pki';

/**
 * What the authentication steps refuse, and the shape of the refusal; what they keep prepared per
 * method version; the template's edge cases; the mutual-tls identity. (Issue 19: the mutation survivors
 * of authentication-steps.ts that the unit and e2e files left.)
 */
const NOW = 1_800_000_000_123;

function request(protocol = 'https:'): OutboundRequest {
  return {
    url: new URL(`${protocol}//api.example/v1/charge?x=1`),
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"card":"4111111111111111"}'),
    timeoutMs: 30_000,
    trusted: false,
    identity: null,
  };
}

function method(
  kind: string,
  fields: Record<string, string>,
  options: { id?: string; version?: string } = {},
): UsableAuthenticationMethod {
  return {
    id: options.id ?? randomUUID(),
    configId: randomUUID(),
    kind: kind as UsableAuthenticationMethod['kind'],
    version: options.version ?? '1',
    fields,
  };
}

const HMAC = { secret: 's', algorithm: 'sha256', encoding: 'hex', header: 'x-sig' };
const rsaPem = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({
  type: 'spki',
  format: 'pem',
}) as string;
const ecJwk = JSON.stringify(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }));

async function refusal(m: UsableAuthenticationMethod, req = request()) {
  try {
    await new AuthenticationSteps().apply(req, [m], NOW);
  } catch (error) {
    expect(error).toBeInstanceOf(ProblemException);
    return error as ProblemException;
  }
  throw new Error('expected a refusal');
}

describe('authentication steps: refusals name the method and the reason, never a value', () => {
  // Titles name the kind and row only: the rows hold generated keys, and Stryker's per-test coverage
  // finds tests again by title.
  it.each([
    ['hmac-signature', { ...HMAC, algorithm: 'md5' }, 'its algorithm is not sha256 or sha512'],
    ['hmac-signature', { ...HMAC, encoding: 'base32' }, 'its encoding is not hex or base64'],
    ['hmac-signature', { ...HMAC, header: '' }, 'its header is not a header name'],
    ['hmac-signature', { ...HMAC, header: 'x sig' }, 'its header is not a header name'],
    ['hmac-signature', { ...HMAC, timestamp_header: 'x:ts' }, 'its timestamp_header is not a header name'],
    ['hmac-signature', { ...HMAC, prefix: 'v1\n' }, 'its prefix has a character a header cannot carry'],
    ['hmac-signature', { algorithm: 'sha256', encoding: 'hex', header: 'x-sig' }, 'it has no secret'],
    [
      'jwe-payload',
      { algorithm: 'RSA1_5', encryption: 'A256GCM', public_key: rsaPem },
      'its algorithm is not RSA-OAEP-256 or ECDH-ES+A256KW',
    ],
    [
      'jwe-payload',
      { algorithm: 'RSA-OAEP-256', encryption: 'A128GCM', public_key: rsaPem },
      'its encryption is not A256GCM or A128CBC-HS256',
    ],
    [
      'jwe-payload',
      { algorithm: 'RSA-OAEP-256', encryption: 'A256GCM', public_key: 'not a key' },
      'its public_key does not parse as PEM or JWK',
    ],
    [
      'jwe-payload',
      { algorithm: 'ECDH-ES+A256KW', encryption: 'A256GCM', public_key: rsaPem },
      'its public key cannot be used with ECDH-ES+A256KW',
    ],
    [
      'mutual-tls',
      { certificate: 'x', private_key: 'y' },
      expect.stringContaining('do not make a TLS client identity'),
    ],
    ['api-key', { key: 'k' }, 'its kind is not supported here'],
  ])('%s refusal #%#', async (kind, fields, reason) => {
    const m = method(kind, fields);
    const problem = await refusal(m);
    expect(problem.definition.code).toBe('authentication-method-invalid');
    expect(problem.detail).toEqual(
      typeof reason === 'string'
        ? `Authentication method ${m.id} (${kind}) cannot be used: ${reason}. Nothing was sent.`
        : expect.stringMatching(
            new RegExp(`^Authentication method ${m.id} \\(${kind}\\) cannot be used: .+\\. Nothing was sent\\.$`),
          ),
    );
    expect(problem.errors).toEqual([
      {
        location: 'header',
        name: 'x-vault-forward-authentications',
        message: typeof reason === 'string' ? `${m.id}: ${reason}` : expect.stringMatching(new RegExp(`^${m.id}: `)),
      },
    ]);
    expect(JSON.stringify(problem)).not.toContain('not a key');
  });

  it('a JWK with leading whitespace is a JWK; no key_id or content_type: no kid or cty in the header', async () => {
    const m = method('jwe-payload', { algorithm: 'ECDH-ES+A256KW', encryption: 'A256GCM', public_key: `\n  ${ecJwk}` });
    const out = await new AuthenticationSteps().apply(request(), [m], NOW);
    const header = JSON.parse(Buffer.from(out.body!.toString('latin1').split('.')[0], 'base64url').toString('utf8'));
    expect(Object.keys(header).sort()).toEqual(['alg', 'enc', 'epk']);
  });

  it('without timestamp_header no timestamp header is added', async () => {
    const out = await new AuthenticationSteps().apply(request(), [method('hmac-signature', HMAC)], NOW);
    expect(Object.keys(out.headers).sort()).toEqual(['content-type', 'x-sig']);
  });
});

describe('authentication steps: prepared material per method version', () => {
  const sig = (out: OutboundRequest, secret: string) =>
    hmac('sha256', secret, [`${Math.floor(NOW / 1000)}.`, out.body!], 'hex');

  it('reuses what it prepared for the same version, prepares a new version afresh, and forgets on notice', async () => {
    let notify: ((methodId: string | null) => void) | undefined;
    const authentications = {
      onMethodChanged: (listener: (methodId: string | null) => void) => (notify = listener),
    } as unknown as ForwardAuthenticationsService;
    const steps = new AuthenticationSteps(authentications);
    const id = randomUUID();
    const apply = async (secret: string, version: string) =>
      (await steps.apply(request(), [method('hmac-signature', { ...HMAC, secret }, { id, version })], NOW)).headers[
        'x-sig'
      ];
    const out = request();
    expect(await apply('a', '1')).toBe(sig(out, 'a'));
    // Same version: the prepared secret is used (a version names the stored method's content).
    expect(await apply('b', '1')).toBe(sig(out, 'a'));
    expect(await apply('b', '2')).toBe(sig(out, 'b'));
    notify!(id);
    expect(await apply('c', '2')).toBe(sig(out, 'c'));
    notify!(randomUUID());
    expect(await apply('d', '2')).toBe(sig(out, 'c'));
    notify!(null);
    expect(await apply('e', '2')).toBe(sig(out, 'e'));
  });
});

describe('authentication steps: signing templates', () => {
  it('only {method} {path} {timestamp} {body} {body_sha256} are substitutions; no empty literal parts', () => {
    expect(parseTemplate('{method}{path}')).toEqual(['method', 'path']);
    expect(parseTemplate('{body}')).toEqual(['body']);
    expect(parseTemplate('x}{body}')).toEqual([Buffer.from('x}'), 'body']);
    expect(parseTemplate('{bodyX')).toEqual([Buffer.from('{bodyX')]);
    expect(parseTemplate('xbody}')).toEqual([Buffer.from('xbody}')]);
    expect(parseTemplate('a{timestamp}b')).toEqual([Buffer.from('a'), 'timestamp', Buffer.from('b')]);
  });
});

describe('authentication steps: mutual-tls', () => {
  const ca = TestCa.create('Steps CA');
  const client = ca.issue('steps-client', 'client');
  const encrypted = ca.encryptKey(client.key, 'pass-phrase');

  it('sets the identity (id@version, certificate, key, passphrase, CA) on an https request only', async () => {
    const m = method(
      'mutual-tls',
      { certificate: client.cert, private_key: encrypted, passphrase: 'pass-phrase', ca_certificates: ca.cert },
      { version: '7' },
    );
    const out = await new AuthenticationSteps().apply(request(), [m], NOW);
    expect(out.identity).toEqual({
      key: `${m.id}@7`,
      methodId: m.id,
      cert: client.cert,
      privateKey: encrypted,
      passphrase: 'pass-phrase',
      ca: ca.cert,
    });
    const http = await refusal(m, request('http:'));
    expect(http.detail).toContain('mutual TLS needs an https target');
  });

  it('an empty passphrase or CA is none; a wrong passphrase is refused', async () => {
    const m = method('mutual-tls', {
      certificate: client.cert,
      private_key: client.key,
      passphrase: '',
      ca_certificates: '',
    });
    const out = await new AuthenticationSteps().apply(request(), [m], NOW);
    expect(out.identity).toMatchObject({ passphrase: undefined, ca: undefined });
    expect('passphrase' in out.identity! && out.identity.passphrase).toBeUndefined();
    const wrongPassphrase = method('mutual-tls', {
      certificate: client.cert,
      private_key: encrypted,
      passphrase: 'nope',
    });
    expect((await refusal(wrongPassphrase)).detail).toContain('do not make a TLS client identity');
  });

  const notX509 = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n';
  // Node's TLS takes every one of these as a CA bundle; only X.509 parsing of each block tells them apart.
  it.each([
    ['text with no PEM block', 'not a certificate at all'],
    ['a CERTIFICATE block that is not X.509', notX509],
    ['a good certificate followed by a broken block', `${ca.cert}${notX509}`],
    ['an unterminated block', '-----BEGIN CERTIFICATE-----\nMIIB'],
  ])('a CA bundle that does not parse (%s) is refused before anything is sent', async (_, ca_certificates) => {
    const m = method('mutual-tls', { certificate: client.cert, private_key: client.key, ca_certificates });
    const problem = await refusal(m);
    expect(problem.definition.status).toBe(422);
    expect(problem.detail).toContain(
      `${m.id} (mutual-tls) cannot be used: its ca_certificates are not PEM certificates`,
    );
  });
});
