import { createHash, createHmac, generateKeyPairSync, KeyObject, timingSafeEqual, verify } from 'node:crypto';
import { createServer, IncomingMessage } from 'node:http';
import { storeCard } from '../factories/cards';
import { createMerchantWithConfig } from '../factories/forwarding-merchants';
import { listenOnLoopback } from '../support/downstream';
import { queuedForwardEnv, startWorker, stopQueuedSetup, WorkerProcess } from '../support/forward-jobs';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * The four signing kinds end to end: a body with card placeholders is forwarded, synchronously and queued
 * (a real worker process), to a downstream in this file whose verifiers are written here from each
 * provider's documentation (Cybersource's REST HTTP Signature guide, Mastercard's OAuth 1.0a with body hash,
 * AWS's SigV4 guide, RFC 9421/9530), not from src/. The downstream answers 401 when a signature does not
 * verify, so a forward's 200 is the downstream's verdict; each test also shows that one changed body byte
 * fails the same verifier.
 */

interface Received {
  method: string;
  /** Path and query, as the request line carried them. */
  target: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

type Verifier = (r: Received) => boolean;

const header = (r: Received, name: string): string => {
  const value = r.headers[name];
  if (typeof value !== 'string') throw new Error(`no ${name} header`);
  return value;
};
const sha256 = (data: Buffer | string) => createHash('sha256').update(data);
const same = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1'));
/** RFC 3986 percent-encoding: everything but ALPHA / DIGIT / - . _ ~. */
const rfc3986 = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
/** `a="1", b="2"` or `a="1",b="2"`: the quoted parameters of a header. */
function quotedParams(text: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const match of text.matchAll(/([A-Za-z_]+)="([^"]*)"/g)) params[match[1]] = match[2];
  return params;
}

/** Cybersource: the signature header's `headers` list, each line `name: value`, HMAC-SHA256 with the decoded secret. */
function cybersourceVerifier(secretBase64: string, merchantId: string): Verifier {
  return (r) => {
    const p = quotedParams(header(r, 'signature'));
    if (p.algorithm !== 'HmacSHA256' || header(r, 'v-c-merchant-id') !== merchantId) return false;
    if (r.body.length > 0 && header(r, 'digest') !== `SHA-256=${sha256(r.body).digest('base64')}`) return false;
    const lines = p.headers
      .split(' ')
      .map((name) =>
        name === 'request-target'
          ? `request-target: ${r.method.toLowerCase()} ${r.target}`
          : `${name}: ${header(r, name)}`,
      );
    const expected = createHmac('sha256', Buffer.from(secretBase64, 'base64'))
      .update(lines.join('\n'))
      .digest('base64');
    return p.headers === 'host date request-target digest v-c-merchant-id' && same(p.signature, expected);
  };
}

/** Mastercard: OAuth 1.0a signature base string with oauth_body_hash, RSA-SHA256 with the project's public key. */
function oauthVerifier(publicKey: KeyObject, consumerKey: string): Verifier {
  return (r) => {
    const auth = header(r, 'authorization');
    if (!auth.startsWith('OAuth ')) return false;
    const p = quotedParams(auth);
    if (p.oauth_consumer_key !== consumerKey || p.oauth_signature_method !== 'RSA-SHA256') return false;
    if (p.oauth_body_hash !== sha256(r.body).digest('base64')) return false;
    const [path, query = ''] = r.target.split('?');
    const pairs = [
      ...query.split('&').filter(Boolean),
      ...Object.entries(p)
        .filter(([k]) => k !== 'oauth_signature')
        .map(([k, v]) => `${k}=${v}`),
    ].sort();
    const base = `${r.method}&${rfc3986(`http://${header(r, 'host')}${path}`)}&${rfc3986(pairs.join('&'))}`;
    return verify('sha256', Buffer.from(base), publicKey, Buffer.from(decodeURIComponent(p.oauth_signature), 'base64'));
  };
}

/** AWS SigV4, from the "Create a signed AWS API request" guide, over the headers SignedHeaders names. */
function sigV4Verifier(accessKeyId: string, secret: string, region: string, service: string): Verifier {
  const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
  return (r) => {
    const AUTHORIZATION =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/;
    const match = AUTHORIZATION.exec(header(r, 'authorization'));
    if (!match || match[1] !== accessKeyId || match[3] !== region || match[4] !== service) return false;
    const [, , day, , , signedHeaders, signature] = match;
    const date = header(r, 'x-amz-date');
    if (!date.startsWith(day)) return false;
    const [path, query = ''] = r.target.split('?');
    const canonicalQuery = query
      .split('&')
      .filter(Boolean)
      .map((pair) =>
        pair
          .split('=')
          .map((part) => rfc3986(decodeURIComponent(part)))
          .join('='),
      )
      .sort()
      .join('&');
    const canonicalPath = path
      .split('/')
      .map((segment) => rfc3986(segment))
      .join('/');
    const names = signedHeaders.split(';');
    const canonicalRequest = [
      r.method,
      canonicalPath,
      canonicalQuery,
      ...names.map((n) => `${n}:${header(r, n).trim().replace(/ +/g, ' ')}`),
      '',
      signedHeaders,
      sha256(r.body).digest('hex'),
    ].join('\n');
    const stringToSign = [
      'AWS4-HMAC-SHA256',
      date,
      `${day}/${region}/${service}/aws4_request`,
      sha256(canonicalRequest).digest('hex'),
    ].join('\n');
    const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), 'aws4_request');
    return names.includes('host') && same(signature, createHmac('sha256', key).update(stringToSign).digest('hex'));
  };
}

/** RFC 9421 with an Ed25519 key: the signature base rebuilt from Signature-Input; RFC 9530 Content-Digest checked. */
function messageSignatureVerifier(publicKey: KeyObject, keyId: string): Verifier {
  return (r) => {
    const input = /^sig1=\(([^)]*)\)(.*)$/.exec(header(r, 'signature-input'));
    const signature = /^sig1=:([A-Za-z0-9+/=]+):$/.exec(header(r, 'signature'));
    if (!input || !signature || !input[2].includes(`;keyid="${keyId}"`) || !input[2].includes(';alg="ed25519"'))
      return false;
    if (header(r, 'content-digest') !== `sha-256=:${sha256(r.body).digest('base64')}:`) return false;
    const ids = input[1].split(' ').map((quoted) => quoted.slice(1, -1));
    const [path, query] = r.target.split('?');
    const value = (id: string) =>
      ({
        '@method': r.method,
        '@target-uri': `http://${header(r, 'host')}${r.target}`,
        '@authority': header(r, 'host'),
        '@path': path,
        '@query': `?${query ?? ''}`,
      })[id] ?? header(r, id).trim();
    const base = [...ids.map((id) => `"${id}": ${value(id)}`), `"@signature-params": (${input[1]})${input[2]}`].join(
      '\n',
    );
    return verify(null, Buffer.from(base), publicKey, Buffer.from(signature[1], 'base64'));
  };
}

/** A copy of the request with one byte of its body changed. */
function tampered(r: Received): Received {
  const body = Buffer.from(r.body);
  body[body.length - 2] ^= 0x01;
  return { ...r, body };
}

describe('Signed requests: http-signature, oauth1-rsa, aws-sigv4, http-message-signature', () => {
  const env = queuedForwardEnv('signed-requests');
  const verifiers = new Map<string, Verifier>();
  const received = new Map<string, Received[]>();
  let downstream: Awaited<ReturnType<typeof listenOnLoopback>>;
  let t: TestApp;
  let worker: WorkerProcess;
  let merchant: { token: string; configId: string; card: { id: string; number: string } };
  let other: { token: string };

  beforeAll(async () => {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: Received = {
          method: req.method!,
          target: req.url!,
          headers: req.headers,
          body: Buffer.concat(chunks),
        };
        const path = r.target.split('?')[0];
        received.set(path, [...(received.get(path) ?? []), r]);
        let ok: boolean;
        try {
          ok = verifiers.get(path)?.(r) ?? false;
        } catch {
          ok = false;
        }
        res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ verified: ok }));
      });
    });
    downstream = await listenOnLoopback(server);
    t = await startTestApp({ env });
    worker = await startWorker(env);
    const mine = await createMerchantWithConfig(t, downstream.port, 'Signed');
    const configs = await http(t.url, '/vault-forward/configs', { token: mine.token });
    merchant = { token: mine.token, configId: configs.body.items[0].id as string, card: await storeCard(t, mine.id) };
    other = { token: (await createMerchantWithConfig(t, downstream.port, 'Other')).token };
  }, 120_000);

  afterAll(async () => {
    await stopQueuedSetup({ env, worker, t, downstream });
  }, 30_000);

  async function createMethod(kind: string, fields: Record<string, string>): Promise<string> {
    const created = await http(t.url, `/vault-forward/configs/${merchant.configId}/authentications`, {
      method: 'POST',
      token: merchant.token,
      body: { kind, label: kind, fields },
    });
    expect(created.status).toBe(201);
    // Secret fields are never returned.
    for (const secret of ['shared_secret', 'private_key', 'secret_access_key', 'session_token', 'secret'])
      expect(created.body.fields[secret]).toBeUndefined();
    return created.body.id as string;
  }

  function forward(token: string, path: string, methodId: string, prefer?: string) {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${downstream.url}${path}?b=2&a=1`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': merchant.card.id,
        'x-vault-forward-authentications': methodId,
        'content-type': 'application/json',
        ...(prefer ? { prefer } : {}),
      },
      rawBody: '{"card":{"number":"{{ CARD_NUMBER_1 }}","expiry":"{{ CARD_EXPIRATION_DATE_1 }}"},"amount":1299}',
    });
  }

  /** Synchronous and queued forwards, each verified by the downstream; a changed byte fails; another merchant is refused. */
  async function forwardsVerify(path: string, methodId: string, verifier: Verifier): Promise<void> {
    verifiers.set(path, verifier);
    const sync = await forward(merchant.token, path, methodId);
    expect({ status: sync.status, body: sync.body }).toEqual({ status: 200, body: { verified: true } });

    const accepted = await forward(merchant.token, path, methodId, 'respond-async');
    expect(accepted.status).toBe(202);
    const job = await waitFor(
      async () => {
        const read = await http(t.url, `/vault-forward/jobs/${accepted.body.id as string}`, { token: merchant.token });
        return ['succeeded', 'failed', 'cancelled'].includes(read.body.status) && read;
      },
      { timeoutMs: 20_000, what: `queued forward to ${path} to end` },
    );
    expect(job.body).toMatchObject({
      status: 'succeeded',
      attempts: [{ status: 200 }],
      authentication_ids: [methodId],
    });

    const requests = received.get(path)!;
    expect(requests).toHaveLength(2);
    for (const r of requests) {
      // Signed over the filled body: the card number is in what the verifier checked.
      expect(r.body.toString()).toContain(merchant.card.number);
      expect(verifier(r)).toBe(true);
      expect(verifier(tampered(r))).toBe(false);
    }

    const theirs = await forward(other.token, path, methodId);
    expectProblem(theirs, 422, 'authentication-method-not-usable');
    expect(received.get(path)).toHaveLength(2);
  }

  it('http-signature: Cybersource’s HTTP Signature verifies over the filled body', async () => {
    const secret = Buffer.from('e2e-cybersource-shared-secret-bytes!').toString('base64');
    const id = await createMethod('http-signature', {
      merchant_id: 'acme_e2e',
      key_id: 'key-e2e-1',
      shared_secret: secret,
    });
    await forwardsVerify('/cybersource', id, cybersourceVerifier(secret, 'acme_e2e'));
  });

  it('oauth1-rsa: Mastercard’s OAuth 1.0a signature verifies with the public key (a PKCS#1 private key)', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
    const id = await createMethod('oauth1-rsa', { consumer_key: 'e2e-consumer!key', private_key: pem });
    await forwardsVerify('/mastercard', id, oauthVerifier(publicKey, 'e2e-consumer!key'));
  });

  it('aws-sigv4: the SigV4 signature, with a session token, verifies', async () => {
    const fields = {
      access_key_id: 'AKIDE2EEXAMPLE',
      secret_access_key: 'e2e/SecretAccessKey+EXAMPLE',
      session_token: 'e2e-session-token',
      region: 'eu-west-1',
      service: 'execute-api',
    };
    const id = await createMethod('aws-sigv4', fields);
    const verifier = sigV4Verifier(fields.access_key_id, fields.secret_access_key, fields.region, fields.service);
    await forwardsVerify('/aws', id, (r) => header(r, 'x-amz-security-token') === fields.session_token && verifier(r));
  });

  it('http-message-signature: the RFC 9421 Ed25519 signature and its Content-Digest verify', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const id = await createMethod('http-message-signature', {
      key_id: 'e2e-ed25519',
      algorithm: 'ed25519',
      private_key: pem,
    });
    await forwardsVerify('/rfc9421', id, messageSignatureVerifier(publicKey, 'e2e-ed25519'));
  });

  it('the OpenAPI document describes each kind’s fields, secrets write-only, and GET /authentication-kinds lists them', async () => {
    const document = (await http(t.url, '/openapi.json')).body;
    const kinds = (await http(t.url, '/vault-forward/authentication-kinds', { token: merchant.token })).body
      .items as Array<{
      kind: string;
      fields: Array<{ name: string; secret: boolean }>;
    }>;
    const expected: Record<string, { schema: string; secrets: string[]; fields: string[] }> = {
      'http-signature': {
        schema: 'HttpSignature',
        secrets: ['shared_secret'],
        fields: ['merchant_id', 'key_id', 'shared_secret'],
      },
      'oauth1-rsa': { schema: 'Oauth1Rsa', secrets: ['private_key'], fields: ['consumer_key', 'private_key'] },
      'aws-sigv4': {
        schema: 'AwsSigv4',
        secrets: ['secret_access_key', 'session_token'],
        fields: ['access_key_id', 'secret_access_key', 'session_token', 'region', 'service'],
      },
      'http-message-signature': {
        schema: 'HttpMessageSignature',
        secrets: ['private_key', 'secret'],
        fields: [
          'key_id',
          'algorithm',
          'private_key',
          'secret',
          'components',
          'content_digest',
          'label',
          'tag',
          'expires_in',
        ],
      },
    };
    for (const [kind, { schema, secrets, fields }] of Object.entries(expected)) {
      const request = document.components.schemas[`ForwardAuthentication${schema}Request`];
      const response = document.components.schemas[`ForwardAuthentication${schema}Response`];
      const properties = request.properties.fields.properties as Record<string, { writeOnly?: boolean }>;
      expect(Object.keys(properties)).toEqual(fields);
      expect(Object.keys(properties).filter((name) => properties[name].writeOnly)).toEqual(secrets);
      expect(Object.keys(response.properties.fields.properties)).toEqual(fields.filter((f) => !secrets.includes(f)));
      const listed = kinds.find((k) => k.kind === kind)!;
      expect(listed.fields.filter((f) => f.secret).map((f) => f.name)).toEqual(secrets);
    }
  });

  it('the catalog’s Cybersource and Mastercard take their signature in Gr4vy’s shape, stored as our signing kind', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const secret = Buffer.from('gr4vy-shape-cybersource-secret').toString('base64');
    const cases = [
      {
        definition: 'cybersource',
        fields: [
          { key: 'merchant_id', value: 'acme_gr4vy' },
          { key: 'key_id', value: 'key-gr4vy' },
          { key: 'shared_secret', value: secret },
        ],
        shown: [
          { key: 'merchant_id', value: 'acme_gr4vy' },
          { key: 'key_id', value: 'key-gr4vy' },
        ],
      },
      {
        definition: 'mastercard',
        fields: [
          { key: 'consumer_key', value: 'gr4vy!consumer' },
          { key: 'private_key', value: pem },
        ],
        shown: [{ key: 'consumer_key', value: 'gr4vy!consumer' }],
      },
    ];
    for (const c of cases) {
      const config = await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token: merchant.token,
        body: { definition_id: c.definition },
      });
      expect(config.status).toBe(201);
      const created = await http(t.url, `/vault-forward/configs/${config.body.id as string}/authentications`, {
        method: 'POST',
        token: merchant.token,
        body: { kind: 'signature', display_name: `${c.definition} signing`, fields: c.fields },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ type: 'vault-forward-config-authentication', kind: 'signature' });
      expect(created.body.fields).toEqual(c.shown);
      expect(created.text).not.toContain(secret);
      expect(created.text).not.toContain('PRIVATE KEY');
    }
  });
});
