import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { MAX_KEY_LENGTH } from '../../src/platform/http/validation.pipe';
import { echoed } from '../../src/platform/problem/echo';
import { createApiKey } from '../factories/api-keys';
import { createBuyer } from '../factories/buyers';
import { cardNumber, createCard } from '../factories/cards';
import { createCheckoutSession } from '../factories/checkout-sessions';
import { createMerchantWithToken } from '../factories/forwarding-merchants';
import { http, HttpResult } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { TestCa } from '../support/test-pki';

/**
 * Every write route of the /openapi.json the service serves, driven from a valid body: NUL, a lone
 * surrogate and an over-long value in each string field, and the same three in a key of each object
 * (free-form ones such as metadata included), one at a time. Each is a 4xx problem, never a 5xx, and
 * no answer repeats the secret the base bodies carry. Sequential requests against one app.
 */

/** Planted in secrets and in the bad values: no answer may repeat it. */
const MARK = 'MARK-5e1d0c';

/** Past the largest bound any field declares (a CA bundle: 256 KiB) and within the 1 MiB body limit. */
const UNDECLARED_OVER_LONG = 300_000;

interface Schema {
  type?: string | string[];
  $ref?: string;
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  enum?: unknown[];
  maxLength?: number;
}

type Path = Array<string | number>;

interface Route {
  /** `METHOD /path` as the document spells it. */
  operation: string;
  /** Which alternative of a oneOf body, by its `kind`; absent when the body has one shape. */
  variant?: string;
  target: () => string;
  token: () => string;
  /** A valid body (fresh ids each call, so a wrongly accepted request never collides with the base). */
  base: () => Record<string, unknown>;
}

const isType = (schema: Schema, type: string) =>
  schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));

/** Where the strings and the objects of a body are, by the schema; an array's items at index 0. */
function walk(schema: Schema, resolve: (s: Schema) => Schema, path: Path = []) {
  const strings: Array<{ path: Path; schema: Schema }> = [];
  const objects: Path[] = [];
  const s = resolve(schema);
  if (isType(s, 'string')) strings.push({ path, schema: s });
  if (s.items) {
    const inner = walk(s.items, resolve, [...path, 0]);
    strings.push(...inner.strings);
    objects.push(...inner.objects);
  }
  if (s.properties || isType(s, 'object')) {
    objects.push(path);
    for (const [name, property] of Object.entries(s.properties ?? {})) {
      const inner = walk(property, resolve, [...path, name]);
      strings.push(...inner.strings);
      objects.push(...inner.objects);
    }
    if (typeof s.additionalProperties === 'object') {
      const inner = walk(s.additionalProperties, resolve, [...path, 'free_key']);
      strings.push(...inner.strings);
    }
  }
  return { strings, objects };
}

/** A copy of `body` with `value` at `path`, creating the objects and arrays missing on the way. */
function withValue(body: Record<string, unknown>, path: Path, value: unknown): Record<string, unknown> {
  const copy = structuredClone(body);
  let node: any = copy;
  for (const [i, segment] of path.slice(0, -1).entries())
    node = node[segment] ??= typeof path[i + 1] === 'number' ? [] : {};
  node[path[path.length - 1]] = value;
  return copy;
}

/** The field name a validation problem gives a path: dotted. */
const fieldName = (path: Path) => path.join('.');

describe('Write routes of /openapi.json refuse unstorable and over-long strings and keys', () => {
  let t: TestApp;
  let doc: { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, Schema> } };
  let resolve: (s: Schema) => Schema;
  let routes: Route[];
  let ca: TestCa;
  /** What to DELETE afterwards, and with which token. */
  const cleanup: Array<[string, string]> = [];

  beforeAll(async () => {
    t = await startTestApp();
    ca = TestCa.create('write-routes');
    doc = (await http(t.url, '/openapi.json')).body;
    resolve = (s) => (s.$ref ? doc.components.schemas[s.$ref.split('/').pop()!] : s);

    const merchant = await createMerchantWithToken(t);
    const token = merchant.token;
    const instanceToken = await (await createApiKey(t, null)).token();
    const created = async (path: string, body: unknown, tok = token) => {
      const result = await http(t.url, path, { method: 'POST', token: tok, body });
      if (result.status !== 201) throw new Error(`POST ${path}: ${result.status} ${result.text}`);
      return result.body.id as string;
    };
    const slug = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
    const definition = (withId: boolean) => ({
      ...(withId ? { id: slug('psp') } : {}),
      display_name: 'Example PSP',
      hosts: ['https://api.example-psp.com'],
      authentications: [
        {
          kind: 'signature',
          title: 'Request signature',
          description: 'HMAC-SHA256 of the body.',
          fields: [
            {
              key: 'api_secret',
              display_name: 'API secret',
              required: true,
              format: 'text',
              secret: true,
              maps_to: 'secret',
            },
          ],
          settings: { algorithm: 'sha256', encoding: 'hex', header: 'x-psp-signature' },
        },
      ],
    });
    const definitionId = await created('/vault-forward/definitions', definition(true), instanceToken);
    cleanup.push([`/vault-forward/definitions/${definitionId}`, instanceToken]);
    const configId = await created('/vault-forward/configs', { display_name: 'PSP', hosts: ['psp.example'] });
    const gr4vyConfigId = await created('/vault-forward/configs', { definition_id: definitionId });
    const inboundRoute = () => ({
      display_name: 'Partner bookings',
      upstream_url: 'https://merchant.example/inbound',
      methods: ['POST'],
      path_prefixes: ['/bookings'],
      caller_authentication: { kind: 'shared-secret', header: 'x-partner-key', secret: `partner-${MARK}` },
      field_mappings: { json: { expiration_date: '/cards/*/expiry', cardholder_name: '/cards/*/holder' } },
      upstream_headers: [{ name: 'authorization', value: `Bearer ${MARK}` }],
    });
    const inboundRouteId = await created('/vault-forward/inbound-routes', inboundRoute());
    cleanup.push([`/vault-forward/configs/${gr4vyConfigId}`, token]);
    const hmac = () => ({
      kind: 'hmac-signature',
      label: 'PSP signing',
      fields: { secret: `s-${MARK}`, algorithm: 'sha256', encoding: 'hex', header: 'x-signature' },
    });
    const gr4vySignature = () => ({
      kind: 'signature',
      display_name: 'Signing',
      fields: [{ key: 'api_secret', value: `s-${MARK}` }],
    });
    const methods = `/vault-forward/configs/${configId}/authentications`;
    const gr4vyMethods = `/vault-forward/configs/${gr4vyConfigId}/authentications`;
    const ourMethodId = await created(methods, hmac());
    const gr4vyMethodId = await created(gr4vyMethods, gr4vySignature());
    const buyerId = (await createBuyer(t, merchant.id)).id;
    const cardId = (await createCard(t, merchant.id)).id;
    const session = await createCheckoutSession(t, token, {
      card: { number: cardNumber(), expiration_date: '12/30', security_code: '123' },
    });
    const client = ca.issue('client.merchant.example', 'client');
    const base64Secret = randomBytes(32).toString('base64');
    const rsaKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();

    const merchantRoute = (
      operation: string,
      target: string,
      base: () => Record<string, unknown>,
      variant?: string,
    ) => ({
      operation,
      variant,
      target: () => target,
      token: () => token,
      base,
    });
    routes = [
      {
        operation: 'POST /merchant-accounts',
        target: () => '/merchant-accounts',
        token: () => instanceToken,
        base: () => ({ id: slug('m'), display_name: 'Acme' }),
      },
      {
        operation: 'PUT /merchant-accounts/{id}',
        target: () => `/merchant-accounts/${merchant.id}`,
        token: () => instanceToken,
        base: () => ({ display_name: 'Acme renamed' }),
      },
      merchantRoute('POST /payment-methods', '/payment-methods', () => ({
        method: 'card',
        number: cardNumber(),
        expiration_date: '12/30',
        cardholder_name: 'Ann Holder',
      })),
      merchantRoute(
        'POST /payment-methods/{payment_method_id}/network-tokens',
        `/payment-methods/${cardId}/network-tokens`,
        () => ({
          token: cardNumber('4', 16),
          expiration_date: '12/30',
        }),
      ),
      merchantRoute('POST /checkout/sessions', '/checkout/sessions', () => ({ metadata: { order: 'o-1' } })),
      merchantRoute('PUT /checkout/sessions/{session_id}', `/checkout/sessions/${session.id}`, () => ({
        metadata: { order: 'o-2' },
      })),
      merchantRoute('PUT /checkout/sessions/{session_id}/fields', `/checkout/sessions/${session.id}/fields`, () => ({
        payment_method: { method: 'card', number: cardNumber(), expiration_date: '12/30', security_code: '123' },
      })),
      merchantRoute(
        'PUT /checkout/sessions/{session_id}/three-d-secure',
        `/checkout/sessions/${session.id}/three-d-secure`,
        () => ({
          cavv: 'AAABCZIhcQAAAABZlyFxAAAAAAA=',
          eci: '05',
          version: '2.2.0',
          directory_response: 'Y',
          authentication_response: 'Y',
          directory_transaction_id: 'c4e59ceb-a382-4d6a-bc87-385d591fa09d',
          server_transaction_id: '8b1c6f47-0d3f-4a4f-9a51-0e3c4f5b8f11',
          scheme: 'visa',
        }),
      ),
      merchantRoute('POST /buyers', '/buyers', () => ({ display_name: 'John Doe', external_identifier: slug('user') })),
      merchantRoute('PUT /buyers/{id}', `/buyers/${buyerId}`, () => ({
        display_name: 'Jane Doe',
        external_identifier: slug('user'),
      })),
      {
        operation: 'POST /vault-forward/definitions',
        target: () => '/vault-forward/definitions',
        token: () => instanceToken,
        base: () => definition(true),
      },
      {
        operation: 'PUT /vault-forward/definitions/{id}',
        target: () => `/vault-forward/definitions/${definitionId}`,
        token: () => instanceToken,
        base: () => definition(false),
      },
      merchantRoute('POST /vault-forward/configs', '/vault-forward/configs', () => ({
        display_name: 'Acme PSP',
        hosts: ['api.acme-psp.example'],
        methods: ['POST'],
        response_rules: [
          {
            match: '$.card.number',
            action: 'tokenize',
            expiration_date: '$.card.expiry',
            cardholder_name: '$.card.name',
          },
        ],
        unmatched_pan: 'mask',
      })),
      merchantRoute('PUT /vault-forward/configs/{id}', `/vault-forward/configs/${configId}`, () => ({
        display_name: 'PSP',
        hosts: ['psp.example'],
        response_rules: [{ match: '$.card.number', action: 'mask' }],
      })),
      merchantRoute('POST /vault-forward/inbound-routes', '/vault-forward/inbound-routes', inboundRoute),
      merchantRoute(
        'PUT /vault-forward/inbound-routes/{id}',
        `/vault-forward/inbound-routes/${inboundRouteId}`,
        () => ({
          display_name: 'Partner bookings',
          caller_authentication: { kind: 'hmac', scheme: 'hmac-sha256', header: 'x-sig', secret: `signing-${MARK}` },
        }),
      ),
      merchantRoute('PUT /vault-forward/budget', '/vault-forward/budget', () => ({
        distinct_cards: 100_000,
        webhook_url: 'https://alerts.merchant.example/vault',
      })),
      merchantRoute('PUT /vault-forward/configs/{id}/budget', `/vault-forward/configs/${configId}/budget`, () => ({
        disclosures_per_card: 10,
        allowed_placeholders: ['CARD_EXPIRATION_DATE', 'CARD_LAST4'],
      })),
      merchantRoute('POST /vault-forward/configs/{config_id}/authentications', methods, hmac, 'hmac-signature'),
      merchantRoute(
        'POST /vault-forward/configs/{config_id}/authentications',
        methods,
        () => ({
          kind: 'mutual-tls',
          label: 'Client certificate',
          fields: {
            certificate: client.cert,
            private_key: client.key,
            passphrase: `p-${MARK}`,
            ca_certificates: ca.cert,
          },
        }),
        'mutual-tls',
      ),
      merchantRoute(
        'POST /vault-forward/configs/{config_id}/authentications',
        methods,
        () => ({
          kind: 'jwe-payload',
          label: 'Encrypted payload',
          fields: {
            public_key: publicKey,
            key_id: 'psp-2026-01',
            algorithm: 'ECDH-ES+A256KW',
            encryption: 'A256GCM',
            content_type: 'application/json',
          },
        }),
        'jwe-payload',
      ),
      merchantRoute(
        'POST /vault-forward/configs/{config_id}/authentications',
        methods,
        () => ({ kind: 'template-secrets', label: 'Signing key', fields: { name: slug('key'), value: `v-${MARK}` } }),
        'template-secrets',
      ),
      merchantRoute(
        'POST /vault-forward/configs/{config_id}/authentications',
        methods,
        () => ({
          kind: 'http-signature',
          label: 'Cybersource',
          fields: { merchant_id: 'psp_merchant', key_id: 'key-1', shared_secret: base64Secret },
        }),
        'http-signature',
      ),
      merchantRoute(
        'POST /vault-forward/configs/{config_id}/authentications',
        methods,
        () => ({
          kind: 'oauth1-rsa',
          label: 'Mastercard',
          fields: { consumer_key: 'consumer-1', private_key: rsaKey },
        }),
        'oauth1-rsa',
      ),
      merchantRoute(
        'POST /vault-forward/configs/{config_id}/authentications',
        methods,
        () => ({
          kind: 'aws-sigv4',
          label: 'API Gateway',
          fields: {
            access_key_id: 'AKIDEXAMPLE',
            secret_access_key: `s-${MARK}`,
            region: 'eu-west-1',
            service: 'execute-api',
          },
        }),
        'aws-sigv4',
      ),
      merchantRoute(
        'POST /vault-forward/configs/{config_id}/authentications',
        methods,
        () => ({
          kind: 'http-message-signature',
          label: 'RFC 9421',
          fields: { key_id: 'key-1', algorithm: 'hmac-sha256', secret: base64Secret },
        }),
        'http-message-signature',
      ),
      merchantRoute(
        'POST /vault-forward/configs/{config_id}/authentications',
        methods,
        () => ({
          kind: 'oauth2-client-credentials',
          label: 'Token',
          fields: { token_url: 'https://psp.example/oauth/token', client_id: 'client-1', client_secret: `s-${MARK}` },
        }),
        'oauth2-client-credentials',
      ),
      merchantRoute(
        'POST /vault-forward/configs/{config_id}/authentications',
        gr4vyMethods,
        gr4vySignature,
        'signature',
      ),
      merchantRoute(
        'PUT /vault-forward/configs/{config_id}/authentications/{id}',
        `${methods}/${ourMethodId}`,
        () => ({ label: 'PSP signing, renamed', fields: hmac().fields }),
        'ForwardAuthenticationOurUpdateRequest',
      ),
      merchantRoute(
        'PUT /vault-forward/configs/{config_id}/authentications/{id}',
        `${gr4vyMethods}/${gr4vyMethodId}`,
        () => ({ display_name: 'Signing, renamed', fields: gr4vySignature().fields }),
        'ForwardAuthenticationGr4vyUpdateRequest',
      ),
    ];
  });
  // Definitions are the instance's, seen by every merchant of the run's database: removed, with the config using one.
  afterAll(async () => {
    for (const [path, tok] of cleanup.reverse())
      expect((await http(t.url, path, { method: 'DELETE', token: tok })).status).toBe(204);
    await t?.close();
  });

  /** The document's write routes with a JSON body, each alternative of a oneOf on its own. */
  function documented(): Array<{ operation: string; variant?: string; schema: Schema }> {
    const found: Array<{ operation: string; variant?: string; schema: Schema }> = [];
    for (const [path, byMethod] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(byMethod)) {
        const schema: Schema | undefined = op.requestBody?.content?.['application/json']?.schema;
        if (!['post', 'put', 'patch'].includes(method) || !schema) continue;
        const operation = `${method.toUpperCase()} ${path}`;
        const shapes = resolve(schema).oneOf;
        if (!shapes) {
          found.push({ operation, schema });
          continue;
        }
        for (const shape of shapes) {
          const kinds = resolve(shape).properties?.kind?.enum as string[] | undefined;
          // Gr4vy's create takes three kinds in one shape; the walk needs one of them.
          const variant = kinds?.includes('signature') ? 'signature' : (kinds?.[0] ?? shape.$ref!.split('/').pop()!);
          found.push({ operation, variant, schema: shape });
        }
      }
    }
    return found;
  }

  it('has a valid base body for every write route the document lists, and each is accepted', async () => {
    const listed = documented().map((d) => `${d.operation} ${d.variant ?? ''}`.trim());
    expect(routes.map((r) => `${r.operation} ${r.variant ?? ''}`.trim()).sort()).toEqual([...listed].sort());
    for (const route of routes) {
      const result = await http(t.url, route.target(), {
        method: route.operation.split(' ')[0],
        token: route.token(),
        body: route.base(),
      });
      if (route.operation === 'POST /vault-forward/definitions' && result.status === 201)
        cleanup.push([`/vault-forward/definitions/${result.body.id}`, route.token()]);
      const accepted = result.status === 200 || result.status === 201;
      expect({ route: route.operation, variant: route.variant, accepted, text: result.text }).toEqual({
        route: route.operation,
        variant: route.variant,
        accepted: true,
        text: expect.not.stringContaining(MARK),
      });
    }
  });

  it('answers each bad string or key with a 4xx problem that names the field and repeats no secret', async () => {
    const failures: string[] = [];
    let sent = 0;
    const expectRefused = (route: Route, what: string, result: HttpResult, named?: string): void => {
      sent++;
      const problem = result.body as Record<string, any> | undefined;
      const where = `${route.operation}${route.variant ? ` (${route.variant})` : ''}: ${what}`;
      if (result.status < 400 || result.status >= 500 || !problem?.code)
        failures.push(`${where} → ${result.status} ${result.text.slice(0, 200)}`);
      else if (named !== undefined && !problem.errors?.some((e: { name: string }) => e.name === named))
        failures.push(
          `${where} → ${result.status} without naming ${JSON.stringify(named)}: ${result.text.slice(0, 300)}`,
        );
      else if (result.text.includes(MARK)) failures.push(`${where} → repeats a secret: ${result.text.slice(0, 300)}`);
    };

    for (const { operation, variant, schema } of documented()) {
      const route = routes.find((r) => r.operation === operation && r.variant === variant)!;
      const send = (body: Record<string, unknown>) =>
        http(t.url, route.target(), { method: operation.split(' ')[0], token: route.token(), body });
      const { strings, objects } = walk(schema, resolve);
      for (const { path, schema: field } of strings) {
        const name = fieldName(path);
        for (const [what, value, named] of [
          ['NUL', `${MARK}\u0000`, name],
          ['lone surrogate', `${MARK}\ud800`, name],
          [
            'over-long',
            'x'.repeat(field.maxLength === undefined ? UNDECLARED_OVER_LONG : field.maxLength + 1),
            undefined,
          ],
        ] as const)
          expectRefused(route, `${what} in ${name}`, await send(withValue(route.base(), path, value)), named);
      }
      for (const path of objects) {
        const inObject = path.length ? `a key of ${fieldName(path)}` : 'a top-level key';
        for (const [what, key, shown] of [
          // The key as sent, and as the problem names it: its NUL or lone surrogate escaped.
          ['NUL', 'a\u0000b', 'a\\u0000b'],
          ['lone surrogate', '\udc00', '\\udc00'],
          ['over-long', 'k'.repeat(MAX_KEY_LENGTH + 1), 'k'.repeat(MAX_KEY_LENGTH + 1)],
        ] as const) {
          // Named by the walk, as far as a problem repeats a name (its first 100 characters).
          const named = echoed(fieldName([...path, shown]));
          expectRefused(
            route,
            `${what} in ${inObject}`,
            await send(withValue(route.base(), [...path, key], 'v')),
            named,
          );
        }
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(300);
  });
});
