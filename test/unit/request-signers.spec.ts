import {
  createHash,
  createHmac,
  createPrivateKey,
  createSecretKey,
  generateKeyPairSync,
  randomUUID,
  verify,
} from 'node:crypto';
import { sigV4 } from '../../src/modules/forwarding-setup/request-signers/aws-sigv4';
import {
  cybersourceHeaders,
  cybersourceSigningString,
} from '../../src/modules/forwarding-setup/request-signers/cybersource-http-signature';
import {
  contentDigest,
  signatureBase,
  signBase,
  messageSignatureHeaders,
} from '../../src/modules/forwarding-setup/request-signers/http-message-signature';
import {
  oauthAuthorization,
  oauthBaseUri,
  oauthBodyHash,
  oauthParameterString,
  oauthQueryParameters,
  oauthSignatureBaseString,
} from '../../src/modules/forwarding-setup/request-signers/mastercard-oauth1';
import type { SignableRequest } from '../../src/modules/forwarding-setup/request-signers/signable';
import { ProblemException } from '../../src/platform/problem/problem';
import { AuthenticationSteps } from '../../src/modules/forwarding/sending/authentication-steps';
import type { OutboundRequest } from '../../src/modules/forwarding/sending/outbound-request';
import { fieldErrors, secretWarnings } from '../../src/modules/forwarding-setup/authentication-kinds/method-fields';

/** Published test vectors of each signing scheme, reproduced by our signers. */

describe('AWS Signature Version 4: the aws-sig-v4-test-suite', () => {
  // The suite's credentials and clock (its README): AKIDEXAMPLE, us-east-1, service "service", 20150830T123600Z.
  const credentials = {
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    sessionToken: undefined as string | undefined,
    region: 'us-east-1',
    service: 'service',
  };
  const now = Date.UTC(2015, 7, 30, 12, 36, 0);
  const scope = 'AKIDEXAMPLE/20150830/us-east-1/service/aws4_request';
  const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
  const request = (method: string, path: string, headers: Record<string, string> = {}, body?: string) => ({
    method,
    url: new URL(`https://example.amazonaws.com${path}`),
    headers,
    body: body === undefined ? undefined : Buffer.from(body),
  });

  it('get-vanilla', async () => {
    const signed = await sigV4(request('GET', '/'), credentials, now);
    expect(signed.canonicalRequest).toBe(
      [
        'GET',
        '/',
        '',
        'host:example.amazonaws.com',
        'x-amz-date:20150830T123600Z',
        '',
        'host;x-amz-date',
        EMPTY_SHA256,
      ].join('\n'),
    );
    expect(signed.stringToSign).toBe(
      'AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n' +
        'bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63',
    );
    expect(signed.headers.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=${scope}, SignedHeaders=host;x-amz-date, ` +
        'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
    expect(signed.headers['x-amz-date']).toBe('20150830T123600Z');
  });

  it('post-vanilla', async () => {
    expect((await sigV4(request('POST', '/'), credentials, now)).headers.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=${scope}, SignedHeaders=host;x-amz-date, ` +
        'Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
    );
  });

  it('post-x-www-form-urlencoded', async () => {
    const signed = await sigV4(
      request('POST', '/', { 'content-type': 'application/x-www-form-urlencoded' }, 'Param1=value1'),
      credentials,
      now,
    );
    expect(signed.canonicalRequest.split('\n').slice(-2)).toEqual([
      'content-type;host;x-amz-date',
      '9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e',
    ]);
    expect(signed.headers.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=${scope}, SignedHeaders=content-type;host;x-amz-date, ` +
        'Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a',
    );
  });

  it('get-vanilla-query-order-key-case', async () => {
    const signed = await sigV4(request('GET', '/?Param2=value2&Param1=value1'), credentials, now);
    expect(signed.canonicalRequest.split('\n')[2]).toBe('Param1=value1&Param2=value2');
    expect(signed.headers.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=${scope}, SignedHeaders=host;x-amz-date, ` +
        'Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
    );
  });

  it('post-sts-token (post-sts-header-before: the token is signed)', async () => {
    const sessionToken =
      'AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUu' +
      'wthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQc' +
      'HNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==';
    const signed = await sigV4(request('POST', '/'), { ...credentials, sessionToken }, now);
    expect(signed.headers['x-amz-security-token']).toBe(sessionToken);
    expect(signed.headers.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=${scope}, SignedHeaders=host;x-amz-date;x-amz-security-token, ` +
        'Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead',
    );
  });

  // More of the suite, as @smithy/signature-v4's suite.fixture.ts carries it (the same requests, as URLs here).
  const nonUnreserved = `/?${encodeURIComponent('@#$%^')}=&${encodeURIComponent('+')}=${encodeURIComponent('/,?><`";:\\|][{}')}`;
  const unreserved = '-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const suite: Array<[string, ReturnType<typeof request>, string, string]> = [
    [
      'get-header-key-duplicate',
      request('GET', '/', { 'my-header1': 'value2,value2,value1' }),
      'host;my-header1;x-amz-date',
      'c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea',
    ],
    [
      'get-header-value-order',
      request('GET', '/', { 'my-header1': 'value4,value1,value3,value2' }),
      'host;my-header1;x-amz-date',
      '08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01',
    ],
    [
      'get-header-value-trim',
      request('GET', '/', { 'my-header1': 'value1', 'my-header2': '"a   b   c"' }),
      'host;my-header1;my-header2;x-amz-date',
      'acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736',
    ],
    [
      'get-unreserved',
      request('GET', `/${unreserved}`),
      'host;x-amz-date',
      '07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f',
    ],
    [
      'get-vanilla-empty-query-key',
      request('GET', '/?Param1=value1'),
      'host;x-amz-date',
      'a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb',
    ],
    [
      'get-vanilla-query-unreserved',
      request('GET', `/?${unreserved}=${unreserved}`),
      'host;x-amz-date',
      '9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197',
    ],
    [
      'get-vanilla-utf8-query',
      request('GET', '/?\u1234=bar'),
      'host;x-amz-date',
      '2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04',
    ],
    [
      'post-header-key-sort',
      request('POST', '/', { 'my-header1': 'value1' }),
      'host;my-header1;x-amz-date',
      'c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c',
    ],
    [
      'post-header-value-case',
      request('POST', '/', { 'my-header1': 'VALUE1' }),
      'host;my-header1;x-amz-date',
      'cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d',
    ],
    [
      'post-vanilla-query',
      request('POST', '/?Param1=value1'),
      'host;x-amz-date',
      '28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11',
    ],
    [
      'post-vanilla-query-nonunreserved',
      request('POST', nonUnreserved),
      'host;x-amz-date',
      '66c82657c86e26fb25238d0e69f011edc4c6df5ae71119d7cb98ed9b87393c1e',
    ],
    [
      'post-x-www-form-urlencoded-parameters',
      request('POST', '/', { 'content-type': 'application/x-www-form-urlencoded; charset=utf8' }, 'Param1=value1'),
      'content-type;host;x-amz-date',
      '1a72ec8f64bd914b0e42e42607c7fbce7fb2c7465f63e3092b3b0d39fa77a6fe',
    ],
  ];
  it.each(suite)('%s', async (_name, signable, signedHeaders, signature) => {
    expect((await sigV4(signable, credentials, now)).headers.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
    );
  });
});

describe('Mastercard OAuth 1.0a: oauth1-signer-nodejs test vectors', () => {
  it('signature base string (getSignatureBaseString)', () => {
    const paramString =
      'Format=JSON&Format=XML&MerchantId=GOOGLE%20LTD%20ADWORDS%20CC%40GOOGLE.COM&Type=ExactMatch&oauth_consumer_key=aaa!aaa' +
      '&oauth_nonce=uTeLPs6K&oauth_signature_method=RSA-SHA256&oauth_timestamp=1524771555&oauth_version=1.0';
    expect(
      oauthSignatureBaseString('GET', 'https://sandbox.api.mastercard.com/merchantid/v1/merchantid', paramString),
    ).toBe(
      'GET&https%3A%2F%2Fsandbox.api.mastercard.com%2Fmerchantid%2Fv1%2Fmerchantid&Format%3DJSON%26Format%3DXML%26MerchantId' +
        '%3DGOOGLE%2520LTD%2520ADWORDS%2520CC%2540GOOGLE.COM%26Type%3DExactMatch%26oauth_consumer_key%3Daaa%21aaa%26oauth_nonce' +
        '%3DuTeLPs6K%26oauth_signature_method%3DRSA-SHA256%26oauth_timestamp%3D1524771555%26oauth_version%3D1.0',
    );
  });

  it('query values are used as they appear in the URL, then encoded once with the whole string', () => {
    const base = (uri: string) =>
      oauthSignatureBaseString(
        'GET',
        'https://example.com',
        oauthParameterString(oauthQueryParameters(new URL(uri).search), []),
      );
    expect(base('https://example.com/?param=token1%3Atoken2')).toBe(
      'GET&https%3A%2F%2Fexample.com&param%3Dtoken1%253Atoken2',
    );
    expect(base('https://example.com/?param=token1:token2')).toBe(
      'GET&https%3A%2F%2Fexample.com&param%3Dtoken1%3Atoken2',
    );
  });

  it('parameter string: the RFC example and ascending byte order (toOAuthParamString)', () => {
    const query = new Map<string, Set<string>>([
      ['b5', new Set(['%3D%253D'])],
      ['a3', new Set(['a', '2%20q'])],
      ['c%40', new Set([''])],
      ['a2', new Set(['r%20b'])],
      ['c2', new Set([''])],
    ]);
    const oauth: Array<[string, string]> = [
      ['oauth_consumer_key', '9djdj82h48djs9d2'],
      ['oauth_token', 'kkk9d7dh3k39sjv7'],
      ['oauth_signature_method', 'HMAC-SHA1'],
      ['oauth_timestamp', '137131201'],
      ['oauth_nonce', '7d8f3e4a'],
    ];
    expect(oauthParameterString(query, oauth)).toBe(
      'a2=r%20b&a3=2%20q&a3=a&b5=%3D%253D&c%40=&c2=&oauth_consumer_key=9djdj82h48djs9d2&oauth_nonce=7d8f3e4a' +
        '&oauth_signature_method=HMAC-SHA1&oauth_timestamp=137131201&oauth_token=kkk9d7dh3k39sjv7',
    );
    const bytes = new Map<string, Set<string>>([
      ['b', new Set(['b'])],
      ['A', new Set(['a', 'A'])],
      ['B', new Set(['B'])],
      ['a', new Set(['A', 'a'])],
      ['0', new Set(['0'])],
    ]);
    expect(oauthParameterString(bytes, [])).toBe('0=0&A=A&A=a&B=B&a=A&a=a&b=b');
  });

  it('body hash (getBodyHash) and base URI (getBaseUriString)', () => {
    expect(oauthBodyHash(Buffer.from('{ my: "payload" }'))).toBe('Qm/nLCqwlog0uoCDvypgninzNQ25YHgTmUDl/zOgT1s=');
    expect(
      oauthBaseUri(
        new URL(
          'HTTPS://SANDBOX.api.mastercard.com/merchantid/v1/merchantid?MerchantId=GOOGLE%20LTD%20ADWORDS%20%28CC%40GOOGLE.COM%29&Format=XML',
        ),
      ),
    ).toBe('https://sandbox.api.mastercard.com/merchantid/v1/merchantid');
  });

  it("the library's own vectors: parameter string from the URL, base string, empty body hash, header", async () => {
    const uri =
      'HTTPS://SANDBOX.api.mastercard.com/merchantid/v1/merchantid?MerchantId=GOOGLE%20LTD%20ADWORDS%20%28CC%40GOOGLE.COM%29&Format=XML&Type=ExactMatch&Format=JSON';
    const oauth: Array<[string, string]> = [
      ['oauth_consumer_key', 'aaa!aaa'],
      ['oauth_nonce', 'uTeLPs6K'],
      ['oauth_signature_method', 'RSA-SHA256'],
      ['oauth_timestamp', '1524771555'],
      ['oauth_version', '1.0'],
    ];
    const paramString =
      'Format=JSON&Format=XML&MerchantId=GOOGLE%20LTD%20ADWORDS%20%28CC%40GOOGLE.COM%29&Type=ExactMatch&oauth_consumer_key=aaa!aaa' +
      '&oauth_nonce=uTeLPs6K&oauth_signature_method=RSA-SHA256&oauth_timestamp=1524771555&oauth_version=1.0';
    expect(oauthParameterString(oauthQueryParameters(new URL(uri).search), oauth)).toBe(paramString);
    expect(oauthBaseUri(new URL(uri))).toBe('https://sandbox.api.mastercard.com/merchantid/v1/merchantid');
    expect(
      oauthSignatureBaseString('GET', 'https://sandbox.api.mastercard.com/merchantid/v1/merchantid', paramString),
    ).toBe(
      'GET&https%3A%2F%2Fsandbox.api.mastercard.com%2Fmerchantid%2Fv1%2Fmerchantid&Format%3DJSON%26Format%3DXML%26MerchantId' +
        '%3DGOOGLE%2520LTD%2520ADWORDS%2520%2528CC%2540GOOGLE.COM%2529%26Type%3DExactMatch%26oauth_consumer_key%3Daaa%21aaa' +
        '%26oauth_nonce%3DuTeLPs6K%26oauth_signature_method%3DRSA-SHA256%26oauth_timestamp%3D1524771555%26oauth_version%3D1.0',
    );
    expect(oauthBodyHash(undefined)).toBe('47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const get: SignableRequest = { method: 'GET', url: new URL(uri), headers: {}, body: undefined };
    const header = await oauthAuthorization(
      get,
      { consumerKey: 'aaa!aaa', timestamp: '1524771555', nonce: 'uTeLPs6K' },
      privateKey,
    );
    // Theirs, as OAuth.test.js has it with the signature stubbed as "XXX".
    expect(header.replace(/oauth_signature="[A-Za-z0-9%]+"$/, 'oauth_signature="XXX"')).toBe(
      'OAuth oauth_body_hash="47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",oauth_consumer_key="aaa!aaa",' +
        'oauth_nonce="uTeLPs6K",oauth_signature_method="RSA-SHA256",oauth_timestamp="1524771555",oauth_version="1.0",' +
        'oauth_signature="XXX"',
    );
  });

  it("RFC 5849 and Mastercard's Java and C# signers where the Node.js library departs (decision 0152)", () => {
    // Names in byte order (3.4.1.3.2): a name before the longer names it begins, whatever follows it.
    const query = oauthQueryParameters(new URL('https://example.com/?filter%5Bname%5D=x&filter=1').search);
    expect(oauthParameterString(query, [])).toBe('filter=1&filter%5Bname%5D=x');
    // Every character outside the unreserved set is encoded (3.6), each `!` and `*`, and `'`, `(` and `)`.
    expect(oauthSignatureBaseString('GET', 'https://a.example/p', "k=a!b!c&q=(x)&s=*y*&t='")).toBe(
      'GET&https%3A%2F%2Fa.example%2Fp&k%3Da%21b%21c%26q%3D%28x%29%26s%3D%2Ay%2A%26t%3D%27',
    );
  });

  it('the Authorization header verifies with the public key over the base string', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const request: SignableRequest = {
      method: 'POST',
      url: new URL('https://sandbox.api.mastercard.com/v1/pay?b=2&a=1'),
      headers: {},
      body: Buffer.from('{"pan":"5555555555554444"}'),
    };
    const header = await oauthAuthorization(
      request,
      { consumerKey: 'key!abc', timestamp: '1524771555', nonce: 'uTeLPs6K' },
      privateKey,
    );
    const params = Object.fromEntries(
      header
        .slice('OAuth '.length)
        .split(',')
        .map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 2, -1)]),
    );
    expect(params.oauth_body_hash).toBe(oauthBodyHash(request.body));
    const base =
      'POST&https%3A%2F%2Fsandbox.api.mastercard.com%2Fv1%2Fpay&a%3D1%26b%3D2%26oauth_body_hash%3D' +
      encodeURIComponent(params.oauth_body_hash) +
      '%26oauth_consumer_key%3Dkey%21abc%26oauth_nonce%3DuTeLPs6K%26oauth_signature_method%3DRSA-SHA256' +
      '%26oauth_timestamp%3D1524771555%26oauth_version%3D1.0';
    const signature = Buffer.from(decodeURIComponent(params.oauth_signature), 'base64');
    expect(verify('sha256', Buffer.from(base), publicKey, signature)).toBe(true);
  });
});

describe('Cybersource HTTP Signature', () => {
  // Cybersource publishes no signature together with its secret; the expected value is computed here as the
  // SDKs' SignatureParameterGenerator does, on its documentation's example request.
  const secretBase64 = Buffer.from('cybersource-test-shared-secret-32').toString('base64');
  const body = Buffer.from('{"clientReferenceInformation":{"code":"TC50171_3"}}');
  const post: SignableRequest = {
    method: 'POST',
    url: new URL('https://apitest.cybersource.com/pts/v2/payments'),
    headers: { 'content-type': 'application/json' },
    body,
  };
  const now = Date.UTC(2019, 6, 18, 0, 18, 3);

  it('signs host, date, request-target, digest and v-c-merchant-id, as the SDKs do', () => {
    const digest = `SHA-256=${createHash('sha256').update(body).digest('base64')}`;
    const signingString =
      'host: apitest.cybersource.com\ndate: Thu, 18 Jul 2019 00:18:03 GMT\nrequest-target: post /pts/v2/payments\n' +
      `digest: ${digest}\nv-c-merchant-id: mymerchantid`;
    expect(cybersourceSigningString(post, 'Thu, 18 Jul 2019 00:18:03 GMT', 'mymerchantid').signingString).toBe(
      signingString,
    );
    const headers = cybersourceHeaders(
      post,
      {
        merchantId: 'mymerchantid',
        keyId: '6d75ffad-ed36-4a6d-85af-5609185494f4',
        secret: createSecretKey(Buffer.from(secretBase64, 'base64')),
      },
      now,
    );
    const expected = createHmac('sha256', Buffer.from(secretBase64, 'base64')).update(signingString).digest('base64');
    expect(headers).toEqual({
      'v-c-merchant-id': 'mymerchantid',
      date: 'Thu, 18 Jul 2019 00:18:03 GMT',
      digest,
      signature:
        'keyid="6d75ffad-ed36-4a6d-85af-5609185494f4", algorithm="HmacSHA256", ' +
        `headers="host date request-target digest v-c-merchant-id", signature="${expected}"`,
    });
  });

  it('a GET signs without digest, with the query in request-target', () => {
    const get: SignableRequest = {
      ...post,
      method: 'GET',
      url: new URL('https://apitest.cybersource.com/tss/v2/transactions/1?x=y'),
      body: undefined,
    };
    const { signingString, headerNames, digest } = cybersourceSigningString(get, 'Thu, 18 Jul 2019 00:18:03 GMT', 'm');
    expect(digest).toBeUndefined();
    expect(headerNames).toBe('host date request-target v-c-merchant-id');
    expect(signingString).toBe(
      'host: apitest.cybersource.com\ndate: Thu, 18 Jul 2019 00:18:03 GMT\n' +
        'request-target: get /tss/v2/transactions/1?x=y\nv-c-merchant-id: m',
    );
  });
});

describe('HTTP Message Signatures: RFC 9421 Appendix B', () => {
  // B.2's test-request.
  const request: SignableRequest = {
    method: 'POST',
    url: new URL('https://example.com/foo?param=Value&Pet=dog'),
    headers: {
      date: 'Tue, 20 Apr 2021 02:07:55 GMT',
      'content-type': 'application/json',
      'content-digest':
        'sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:',
      'content-length': '18',
    },
    body: Buffer.from('{"hello": "world"}'),
  };
  const SHARED_SECRET = 'uzvJfB4u3N0Jy4T7NZ75MDVcr8zSTInedJtkgcu46YW4XByzNJjxBdtjUkdJPBtbmHhIDi6pcl8jsasjlTMtDQ==';
  const ed25519 = createPrivateKey({
    key: {
      kty: 'OKP',
      crv: 'Ed25519',
      d: 'n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU',
      x: 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs',
    },
    format: 'jwk',
  });

  it('RFC 9530 Content-Digest of the test body: sha-512 (B.2) and sha-256', () => {
    expect(contentDigest('sha-512', request.body)).toBe(request.headers['content-digest']);
    expect(contentDigest('sha-256', request.body)).toBe('sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:');
  });

  it('B.2.1 minimal signature base', () => {
    const { base } = signatureBase(
      request,
      [],
      [
        ['created', 1618884473],
        ['keyid', 'test-key-rsa-pss'],
        ['nonce', 'b3k2pp5k7z-50gnwp.yemd'],
      ],
    );
    expect(base).toBe(
      '"@signature-params": ();created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd"',
    );
  });

  it('B.2.3 full coverage signature base', () => {
    const components = [
      'date',
      '@method',
      '@path',
      '@query',
      '@authority',
      'content-type',
      'content-digest',
      'content-length',
    ];
    const { base } = signatureBase(request, components, [
      ['created', 1618884473],
      ['keyid', 'test-key-rsa-pss'],
    ]);
    expect(base).toBe(
      [
        '"date": Tue, 20 Apr 2021 02:07:55 GMT',
        '"@method": POST',
        '"@path": /foo',
        '"@query": ?param=Value&Pet=dog',
        '"@authority": example.com',
        '"content-type": application/json',
        '"content-digest": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:',
        '"content-length": 18',
        '"@signature-params": ("date" "@method" "@path" "@query" "@authority" "content-type" "content-digest" ' +
          '"content-length");created=1618884473;keyid="test-key-rsa-pss"',
      ].join('\n'),
    );
  });

  it('B.2.5 hmac-sha256: base and signature', async () => {
    const { base, input } = signatureBase(
      request,
      ['date', '@authority', 'content-type'],
      [
        ['created', 1618884473],
        ['keyid', 'test-shared-secret'],
      ],
    );
    expect(input).toBe('("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"');
    expect(base).toBe(
      '"date": Tue, 20 Apr 2021 02:07:55 GMT\n"@authority": example.com\n"content-type": application/json\n' +
        '"@signature-params": ("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"',
    );
    const secret = createSecretKey(Buffer.from(SHARED_SECRET, 'base64'));
    expect((await signBase(base, { algorithm: 'hmac-sha256', secret })).toString('base64')).toBe(
      'pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8=',
    );
  });

  it('B.2.6 ed25519: base and signature', async () => {
    const components = ['date', '@method', '@path', '@authority', 'content-type', 'content-length'];
    const { base } = signatureBase(request, components, [
      ['created', 1618884473],
      ['keyid', 'test-key-ed25519'],
    ]);
    expect(base).toBe(
      '"date": Tue, 20 Apr 2021 02:07:55 GMT\n"@method": POST\n"@path": /foo\n"@authority": example.com\n' +
        '"content-type": application/json\n"content-length": 18\n' +
        '"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");' +
        'created=1618884473;keyid="test-key-ed25519"',
    );
    expect((await signBase(base, { algorithm: 'ed25519', key: ed25519 })).toString('base64')).toBe(
      'wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==',
    );
  });

  it('the method adds Content-Digest, Signature-Input with created/expires/keyid/alg/tag, and a verifiable Signature', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const headers = await messageSignatureHeaders(
      { ...request, headers: { 'content-type': 'application/json' } },
      {
        keyId: 'k1',
        signingKey: { algorithm: 'ecdsa-p256-sha256', key: privateKey },
        components: ['@method', '@target-uri', 'content-digest', 'content-type', 'x-absent'],
        label: 'sig1',
        tag: 'app',
        expiresIn: 300,
        digest: 'sha-256',
      },
      1618884473_500,
    );
    expect(headers['content-digest']).toBe('sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:');
    const input =
      '("@method" "@target-uri" "content-digest" "content-type");created=1618884473;expires=1618884773;keyid="k1";' +
      'alg="ecdsa-p256-sha256";tag="app"';
    expect(headers['signature-input']).toBe(`sig1=${input}`);
    const base =
      '"@method": POST\n"@target-uri": https://example.com/foo?param=Value&Pet=dog\n' +
      `"content-digest": ${headers['content-digest']}\n"content-type": application/json\n"@signature-params": ${input}`;
    const signature = Buffer.from(headers.signature.slice('sig1=:'.length, -1), 'base64');
    expect(verify('sha256', Buffer.from(base), { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  });
});

describe('signing kinds at forward time and their fields', () => {
  const steps = new AuthenticationSteps(undefined, { epochMs: () => Date.UTC(2021, 3, 20, 2, 7, 53), now: () => null });
  const outbound: OutboundRequest = {
    url: new URL('https://example.com/foo?param=Value&Pet=dog'),
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"hello": "world"}'),
    timeoutMs: 30_000,
    trusted: false,
    identity: null,
  };
  const method = (
    kind: 'http-message-signature' | 'aws-sigv4' | 'http-signature' | 'oauth1-rsa',
    fields: Record<string, string>,
  ) => ({
    id: randomUUID(),
    configId: randomUUID(),
    kind,
    version: '1',
    fields,
  });

  it('takes "now" from the service clock', async () => {
    const sent = await steps.apply(outbound, [
      method('http-message-signature', {
        key_id: 'test-shared-secret',
        algorithm: 'hmac-sha256',
        secret: 'uzvJfB4u3N0Jy4T7NZ75MDVcr8zSTInedJtkgcu46YW4XByzNJjxBdtjUkdJPBtbmHhIDi6pcl8jsasjlTMtDQ==',
      }),
    ]);
    expect(sent.headers['signature-input']).toBe(
      'sig1=("@method" "@target-uri" "content-digest" "content-type");created=1618884473;keyid="test-shared-secret";alg="hmac-sha256"',
    );
    expect(sent.body).toEqual(outbound.body);
  });

  it('signs what a jwe-payload listed before it left: the Content-Digest is of the compact JWE', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwe = {
      id: randomUUID(),
      configId: randomUUID(),
      kind: 'jwe-payload' as const,
      version: '1',
      fields: {
        public_key: rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string,
        algorithm: 'RSA-OAEP-256',
        encryption: 'A256GCM',
      },
    };
    const signer = method('http-message-signature', {
      key_id: 'k',
      algorithm: 'hmac-sha256',
      secret: Buffer.from('key').toString('base64'),
    });
    const sent = await steps.apply(outbound, [jwe, signer]);
    expect(sent.headers['content-type']).toBe('application/jose');
    expect(sent.body!.toString('latin1').split('.')).toHaveLength(5);
    expect(sent.headers['content-digest']).toBe(
      `sha-256=:${createHash('sha256').update(sent.body!).digest('base64')}:`,
    );
  });

  it('a key of another type is a 422 naming the method, and no value is in the message', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const refused: unknown = await steps
      .apply(outbound, [method('oauth1-rsa', { consumer_key: 'ck', private_key: pem })])
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProblemException);
    const problem = refused as ProblemException;
    expect(problem.definition.status).toBe(422);
    expect(problem.detail).toContain('oauth1-rsa');
    expect(JSON.stringify([problem.detail, problem.errors])).not.toContain('PRIVATE KEY');
    expect(secretWarnings('oauth1-rsa', { consumer_key: 'ck', private_key: pem }).map((w) => w.code)).toEqual([
      'private-key-algorithm-mismatch',
    ]);
  });

  it('validates the new formats and the key choice of http-message-signature', () => {
    const names = (kind: Parameters<typeof fieldErrors>[0], fields: Record<string, string>) =>
      fieldErrors(kind, fields).map((e) => e.name);
    expect(names('http-signature', { merchant_id: 'm', key_id: 'k"', shared_secret: 'not base64!' })).toEqual([
      'fields.key_id',
      'fields.shared_secret',
    ]);
    expect(names('aws-sigv4', { access_key_id: 'A', secret_access_key: 's', region: 'EU/1', service: 's3' })).toEqual([
      'fields.region',
    ]);
    expect(names('http-message-signature', { key_id: 'k', algorithm: 'hmac-sha256', private_key: 'x' })).toEqual([
      'fields.secret',
      'fields.private_key',
    ]);
    expect(
      names('http-message-signature', {
        key_id: 'k',
        algorithm: 'ed25519',
        private_key: 'x',
        components: '@method  @nope Content-Type',
        label: 'Sig',
        expires_in: '0',
      }),
    ).toEqual(['fields.components', 'fields.label', 'fields.expires_in']);
    expect(
      names('http-message-signature', {
        key_id: 'k',
        algorithm: 'ed25519',
        private_key: 'x',
        components: '@method @method',
      }),
    ).toEqual(['fields.components']);
  });
});
