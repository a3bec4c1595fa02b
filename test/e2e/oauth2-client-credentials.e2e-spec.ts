import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import Redis from 'ioredis';
import { createMerchantWithToken } from '../factories/forwarding-merchants';
import { closedPort, listenOnLoopback } from '../support/downstream';
import { cardNumber, createCard } from '../factories/cards';
import { endedJob, queuedForwardEnv, startWorker, stopQueuedSetup, WorkerProcess } from '../support/forward-jobs';
import { expectProblem, http, HttpResult } from '../support/http';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { dropKeys, keysMatching } from '../support/redis-keys';
import { RedisMonitor } from '../support/redis-monitor';
import { openVaultEnvelope } from '../support/independent-crypto';
import { OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver';
import { dataDump, logStrings, stringsOf } from '../support/sink-texts';
import { testTempDir } from '../support/temp-data-dir';
import { startTestApp, TEST_MASTER_KEY_1, TestApp } from '../support/test-app';
import { TestCa } from '../support/test-pki';
import { waitFor } from '../support/wait';

/**
 * oauth2-client-credentials against a real token endpoint and a real target, both written here from RFC
 * 6749 (§2.3.1, §4.4, §5.1) and RFC 6750: the token endpoint authenticates the client and issues random
 * tokens; the target accepts only a Bearer token the endpoint issued and the test has not revoked.
 */

/** What the token endpoint does for a client's next requests. */
type Behaviour =
  | { kind: 'issue'; expiresIn: number | null }
  | { kind: 'status'; status: number }
  | { kind: 'not-json' }
  | { kind: 'no-token' }
  | { kind: 'hang' }
  /** Issues a token once `open` resolves. */
  | { kind: 'gate'; open: Promise<void> };

interface TokenRequest {
  clientId: string;
  auth: 'basic' | 'body';
  form: URLSearchParams;
}

/** RFC 6749 Appendix B: application/x-www-form-urlencoded decoding of one value. */
function formDecoded(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, '%20'));
}

/** Over https with `cert`, or over plain http (null); `issued` may be shared with another endpoint. */
async function startTokenEndpoint(
  cert: { cert: string; key: string } | null,
  clients: Map<string, string>,
  issued = new Map<string, string>(),
) {
  const state = {
    requests: [] as TokenRequest[],
    /** Every token issued, by client. */
    issued,
    behaviour: new Map<string, Behaviour>(),
    held: [] as ServerResponse[],
  };
  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const issue = (res: ServerResponse, clientId: string, expiresIn: number | null) => {
    const token = randomBytes(24).toString('base64url');
    state.issued.set(token, clientId);
    answer(res, 200, {
      access_token: token,
      token_type: 'Bearer',
      ...(expiresIn === null ? {} : { expires_in: expiresIn }),
    });
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      if (req.method !== 'POST' || req.url !== '/oauth2/token') return answer(res, 404, { error: 'not_found' });
      if (req.headers['content-type'] !== 'application/x-www-form-urlencoded')
        return answer(res, 400, { error: 'invalid_request' });
      let clientId: string | null;
      let secret: string | null;
      let auth: 'basic' | 'body';
      const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
      if (basic) {
        const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        clientId = formDecoded(decoded.slice(0, colon));
        secret = formDecoded(decoded.slice(colon + 1));
        auth = 'basic';
        if (form.has('client_secret')) return answer(res, 400, { error: 'invalid_request' }); // one method only
      } else {
        clientId = form.get('client_id');
        secret = form.get('client_secret');
        auth = 'body';
      }
      if (!clientId || clients.get(clientId) !== secret) return answer(res, 401, { error: 'invalid_client' });
      if (form.get('grant_type') !== 'client_credentials') return answer(res, 400, { error: 'unsupported_grant_type' });
      state.requests.push({ clientId, auth, form });
      const behaviour = state.behaviour.get(clientId) ?? { kind: 'issue', expiresIn: 3600 };
      switch (behaviour.kind) {
        case 'status':
          // An error answer that repeats the credentials: the service must not pass it on.
          return answer(res, behaviour.status, { error: 'server_error', error_description: `bad secret ${secret}` });
        case 'not-json':
          return answer(res, 200, `<html>${secret}</html>`);
        case 'no-token':
          return answer(res, 200, { token_type: 'Bearer', expires_in: 3600, note: secret });
        case 'hang':
          state.held.push(res);
          return;
        case 'gate':
          state.held.push(res);
          return void behaviour.open.then(() => issue(res, clientId, 3600));
        case 'issue':
          return issue(res, clientId, behaviour.expiresIn);
      }
    });
  };
  const server = cert ? createHttpsServer(cert, handler) : createHttpServer(handler);
  const listening = await listenOnLoopback(server, cert ? 'https' : 'http');
  return {
    ...state,
    ...listening,
    close: () => {
      for (const res of state.held) res.destroy();
      return listening.close();
    },
  };
}

/** RFC 6750 §3: a resource server that takes a Bearer token the endpoint issued and the test has not revoked. */
async function startTarget(issued: Map<string, string>, revoked: Set<string>) {
  const received: Array<{ path: string; token: string | null; body: string; accepted: boolean }> = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const token = /^Bearer ([\x21-\x7e]+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;
      const accepted = token !== null && issued.has(token) && !revoked.has(token);
      received.push({ path: req.url!, token, body: Buffer.concat(chunks).toString('utf8'), accepted });
      if (!accepted) {
        res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' });
        return res.end('{"error":"invalid_token"}');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"paid":true}');
    });
  });
  return { received, ...(await listenOnLoopback(server)) };
}

describe('oauth2-client-credentials: tokens from a real endpoint, sent to a real target', () => {
  const ca = TestCa.create('OAuth CA');
  /** client_id → client_secret, as the provider registered them. */
  const clients = new Map<string, string>();
  const revoked = new Set<string>();
  /** Every answer of the service in this file, to look for secrets and tokens in. */
  const answers: string[] = [];
  let database: IsolatedDatabase;
  let env: Record<string, string>;
  let t: TestApp;
  let worker: WorkerProcess;
  let receiver: OtlpReceiver;
  let endpoint: Awaited<ReturnType<typeof startTokenEndpoint>>;
  /** A token endpoint over plain http on 127.0.0.1, which FORWARD_INSECURE_HOSTS lists here (as for targets). */
  let plainEndpoint: Awaited<ReturnType<typeof startTokenEndpoint>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let merchant: { id: string; token: string };
  let configId: string;
  let card: { id: string; number: string };
  let refusingPort: number;
  /** The Redis the API and the worker share, read with a client of the test's own. */
  const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  /** Every method created here: the shared tokens the service kept for them are removed afterwards. */
  const methodIds: string[] = [];
  /** Where docs/authentication-methods.md says a method's sealed token (and its request's lock) is kept. */
  const sharedKeys = (methodId: string) => `vault-forward:oauth2-token:${methodId}:*`;

  beforeAll(async () => {
    const caFile = join(testTempDir('vf-oauth-ca-'), 'ca.pem');
    writeFileSync(caFile, ca.cert);
    endpoint = await startTokenEndpoint(ca.issue('127.0.0.1', 'server'), clients);
    plainEndpoint = await startTokenEndpoint(null, clients, endpoint.issued);
    target = await startTarget(endpoint.issued, revoked);
    // A port nothing listens on: a token endpoint that refuses connections.
    refusingPort = await closedPort();
    // A database of its own: its dump holds only what this file wrote.
    database = await createIsolatedDatabase('oauth2_methods');
    env = {
      ...queuedForwardEnv('test-oauth2'),
      DATABASE_URL: database.url,
      FORWARD_EXTRA_CA_FILE: caFile,
      FORWARD_RECORD_BODY_RETENTION_DAYS: '30',
    };
    receiver = await startOtlpReceiver();
    t = await startTestApp({ env });
    worker = await startWorker({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' });
    merchant = await createMerchantWithToken(t);
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token: merchant.token,
      body: {
        display_name: 'OAuth PSP',
        hosts: [
          `127.0.0.1:${endpoint.port}`,
          `127.0.0.1:${target.port}`,
          `127.0.0.1:${refusingPort}`,
          `127.0.0.1:${plainEndpoint.port}`,
        ],
        // Its records keep their bodies (decision 0138): the dump below must hold no token through them either.
        record_bodies: true,
      },
    });
    expect(config.status).toBe(201);
    configId = config.body.id;
    // One card, forwarded far more often in this file than the default budget lets a card go out in an hour (0134).
    const budget = await http(t.url, '/vault-forward/budget', {
      method: 'PUT',
      token: merchant.token,
      body: { disclosures_per_card: 100_000 },
    });
    expect(budget.status).toBe(200);
    const number = cardNumber('4', 16);
    card = { id: (await createCard(t, merchant.id, { number, expiration_date: '04/31' })).id, number };
  }, 120_000);

  afterAll(async () => {
    await stopQueuedSetup({ env, worker, t, downstream: target });
    await endpoint?.close();
    await plainEndpoint?.close();
    await receiver?.close();
    await database?.drop();
    await dropKeys(methodIds.map(sharedKeys));
    redis.disconnect();
  }, 60_000);

  function kept<T extends HttpResult>(result: T): T {
    answers.push(result.text);
    return result;
  }

  function postMethod(fields: Record<string, string>) {
    return http(t.url, `/vault-forward/configs/${configId}/authentications`, {
      method: 'POST',
      token: merchant.token,
      body: { kind: 'oauth2-client-credentials', label: 'PSP OAuth', fields },
    }).then(kept);
  }

  /** A new client at the provider and its method here; `fields` overrides. */
  async function createMethod(
    fields: Record<string, string> = {},
    clientId = `client ${randomBytes(4).toString('hex')}:+/`,
  ) {
    const secret = `s3cr3t ${randomBytes(12).toString('base64url')}+&=:ü`;
    clients.set(clientId, secret);
    const created = await postMethod({
      token_url: `${endpoint.url}/oauth2/token`,
      client_id: clientId,
      client_secret: secret,
      ...fields,
    });
    expect(created.status).toBe(201);
    methodIds.push(created.body.id);
    return { id: created.body.id as string, clientId, secret, body: created.body };
  }

  function forward(methodId: string, options: { token?: string; headers?: Record<string, string>; url?: string } = {}) {
    return http(options.url ?? t.url, '/vault-forward', {
      method: 'POST',
      token: options.token ?? merchant.token,
      headers: {
        'x-vault-forward-url': `${target.url}/v1/payments`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card.id,
        'x-vault-forward-authentications': methodId,
        'content-type': 'application/json',
        ...options.headers,
      },
      rawBody: '{"number":"{{ CARD_NUMBER_1 }}","amount":100}',
    }).then(kept);
  }

  const requestsOf = (clientId: string) => endpoint.requests.filter((r) => r.clientId === clientId);
  const tokensOf = (clientId: string) => [...endpoint.issued].filter(([, c]) => c === clientId).map(([tok]) => tok);

  it('refuses a token_url the outbound policy refuses, or whose host the config does not enable', async () => {
    for (const [tokenUrl, message] of [
      // `localhost` is not in FORWARD_INSECURE_HOSTS (127.0.0.1 is).
      [`http://localhost:${endpoint.port}/oauth2/token`, 'not https'],
      [`ftp://127.0.0.1:${endpoint.port}/oauth2/token`, 'must be an https (or http) URL'],
      ['https://auth.elsewhere.example/oauth2/token', 'not one of the hosts of this config'],
      [`https://user:pw@127.0.0.1:${endpoint.port}/oauth2/token`, 'user name or password'],
    ]) {
      const result = await postMethod({ token_url: tokenUrl, client_id: 'c', client_secret: 'never-stored-secret-1' });
      const problem = expectProblem(result, 400, 'validation-failed');
      expect(problem.errors).toEqual([expect.objectContaining({ name: 'fields.token_url' })]);
      expect(problem.errors[0].message).toContain(message);
    }
  });

  describe('the token endpoint obeys the outbound policy of targets', () => {
    it('on a host FORWARD_INSECURE_HOSTS lists, plain http: saved, asked over http, its token sent', async () => {
      const m = await createMethod({ token_url: `${plainEndpoint.url}/oauth2/token` });
      expect(m.body.fields.token_url).toBe(`http://127.0.0.1:${plainEndpoint.port}/oauth2/token`);
      expect((await forward(m.id)).status).toBe(200);
      const asked = plainEndpoint.requests.filter((r) => r.clientId === m.clientId);
      expect(asked).toHaveLength(1);
      expect(requestsOf(m.clientId)).toHaveLength(0);
      const [token] = tokensOf(m.clientId);
      expect(target.received.at(-1)).toMatchObject({ token, accepted: true });
    });

    it('where the policy refuses it, the same problem as a target: when saved and when called', async () => {
      // Saved: a config's http origin and a method's http token_url on a host the operator did not list.
      const plainHost = `http://localhost:${plainEndpoint.port}`;
      const config = kept(
        await http(t.url, '/vault-forward/configs', {
          method: 'POST',
          token: merchant.token,
          body: { display_name: 'Plain PSP', hosts: [plainHost] },
        }),
      );
      const method = await postMethod({ token_url: `${plainHost}/oauth2/token`, client_id: 'c', client_secret: 's1' });
      for (const [result, name] of [
        [config, 'hosts[0]'],
        [method, 'fields.token_url'],
      ] as const) {
        const problem = expectProblem(result, 400, 'validation-failed');
        expect(problem.errors).toEqual([expect.objectContaining({ name })]);
        expect(problem.detail).toContain('FORWARD_INSECURE_HOSTS');
      }
      // Called: by a process whose FORWARD_INSECURE_HOSTS lists the target but not the token endpoint.
      const m = await createMethod({ token_url: `${plainEndpoint.url}/oauth2/token` });
      const strict = await startTestApp({ env: { ...env, FORWARD_INSECURE_HOSTS: `127.0.0.1:${target.port}` } });
      try {
        const received = target.received.length;
        const refused = expectProblem(await forward(m.id, { url: strict.url }), 400, 'insecure-target');
        expect(refused.errors).toEqual([
          expect.objectContaining({
            name: 'x-vault-forward-authentications',
            message: `${m.id}: token_url must use https`,
          }),
        ]);
        const asTarget = await forward(m.id, {
          url: strict.url,
          headers: { 'x-vault-forward-url': plainEndpoint.url },
        });
        expectProblem(asTarget, 400, 'insecure-target');
        expect(plainEndpoint.requests.filter((r) => r.clientId === m.clientId)).toHaveLength(0);
        expect(target.received.length).toBe(received);
      } finally {
        await strict.close();
      }
    });
  });

  it('never returns the client secret; the method answers its public fields', async () => {
    const m = await createMethod({ scope: 'payments:write', client_auth: 'basic' });
    expect(m.body.fields).toEqual({
      token_url: `${endpoint.url}/oauth2/token`,
      client_id: m.clientId,
      scope: 'payments:write',
      client_auth: 'basic',
    });
    const read = kept(
      await http(t.url, `/vault-forward/configs/${configId}/authentications/${m.id}`, { token: merchant.token }),
    );
    expect(read.text).not.toContain(m.secret);
    const kinds = kept(await http(t.url, '/vault-forward/authentication-kinds', { token: merchant.token }));
    const kind = kinds.body.items.find((k: { kind: string }) => k.kind === 'oauth2-client-credentials');
    expect(kind.fields.map((f: { name: string; secret: boolean }) => [f.name, f.secret])).toEqual([
      ['token_url', false],
      ['client_id', false],
      ['client_secret', true],
      ['scope', false],
      ['audience', false],
      ['client_auth', false],
    ]);
  });

  it('a synchronous forward carries a token the endpoint issued (Basic client auth, form-encoded) and the filled body', async () => {
    const m = await createMethod({ scope: 'payments:write refunds', audience: 'https://psp.example/api' });
    const before = target.received.length;
    const result = await forward(m.id);
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ paid: true });
    const got = target.received[before];
    expect(got.accepted).toBe(true);
    expect(tokensOf(m.clientId)).toEqual([got.token]);
    expect(JSON.parse(got.body)).toEqual({ number: card.number, amount: 100 });
    const [request] = requestsOf(m.clientId);
    expect(request.auth).toBe('basic');
    expect(Object.fromEntries(request.form)).toEqual({
      grant_type: 'client_credentials',
      scope: 'payments:write refunds',
      audience: 'https://psp.example/api',
    });
    // The next forward reuses the token.
    expect((await forward(m.id)).status).toBe(200);
    expect(requestsOf(m.clientId)).toHaveLength(1);
    expect(target.received.at(-1)!.token).toBe(got.token);
  });

  it('client_auth body sends the credentials in the form instead', async () => {
    const m = await createMethod({ client_auth: 'body' });
    expect((await forward(m.id)).status).toBe(200);
    const [request] = requestsOf(m.clientId);
    expect(request.auth).toBe('body');
    expect(request.form.get('client_id')).toBe(m.clientId);
  });

  it('a queued forward: the worker obtains a token the same way and sends it with the filled body', async () => {
    const m = await createMethod();
    const queued = await forward(m.id, { headers: { prefer: 'respond-async' } });
    expect(queued.status).toBe(202);
    const job = kept(await endedJob(t.url, merchant.token, queued.body.id));
    expect(job.body).toMatchObject({ status: 'succeeded', response: { status: 200 } });
    const got = target.received.find((r) => r.token === tokensOf(m.clientId)[0]);
    expect(got).toMatchObject({ accepted: true });
    expect(JSON.parse(got!.body)).toEqual({ number: card.number, amount: 100 });
    expect(requestsOf(m.clientId)).toHaveLength(1);
  });

  it('50 concurrent forwards cause exactly one token request', async () => {
    const m = await createMethod();
    const results = await Promise.all(Array.from({ length: 50 }, () => forward(m.id)));
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(requestsOf(m.clientId)).toHaveLength(1);
    const [token] = tokensOf(m.clientId);
    expect(target.received.filter((r) => r.token === token)).toHaveLength(50);
  });

  it('an expiring token is obtained again before it expires', async () => {
    const m = await createMethod();
    endpoint.behaviour.set(m.clientId, { kind: 'issue', expiresIn: 1 });
    expect((await forward(m.id)).status).toBe(200);
    expect(requestsOf(m.clientId)).toHaveLength(1);
    // Forwards go on until one carries a second token (used 0.9 s at most: 10 % early).
    await waitFor(
      async () => {
        expect((await forward(m.id)).status).toBe(200);
        return requestsOf(m.clientId).length === 2;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'a second token request' },
    );
    const [first, second] = tokensOf(m.clientId);
    expect(target.received.at(-1)!.token).toBe(second);
    expect(second).not.toBe(first);
  });

  it('a 401 from the target drops the token: that forward is not resent, the next one obtains a new token', async () => {
    const m = await createMethod();
    expect((await forward(m.id)).status).toBe(200);
    const [first] = tokensOf(m.clientId);
    revoked.add(first);
    const before = target.received.length;
    const refused = await forward(m.id);
    // The target's own answer, passed back: not an error of ours, and the card was sent once.
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-vault-forward-error')).toBeNull();
    expect(target.received.slice(before)).toHaveLength(1);
    expect(requestsOf(m.clientId)).toHaveLength(1);
    const next = await forward(m.id);
    expect(next.status).toBe(200);
    expect(requestsOf(m.clientId)).toHaveLength(2);
    expect(target.received.at(-1)!.token).toBe(tokensOf(m.clientId)[1]);
  });

  it('an edited method does not use the token obtained for its old fields', async () => {
    const m = await createMethod();
    expect((await forward(m.id)).status).toBe(200);
    const secret = `rotated ${randomBytes(8).toString('hex')}`;
    clients.set(m.clientId, secret);
    const updated = kept(
      await http(t.url, `/vault-forward/configs/${configId}/authentications/${m.id}`, {
        method: 'PUT',
        token: merchant.token,
        body: {
          fields: { token_url: `${endpoint.url}/oauth2/token`, client_id: m.clientId, client_secret: secret },
        },
      }),
    );
    expect(updated.status).toBe(200);
    expect((await forward(m.id)).status).toBe(200);
    expect(requestsOf(m.clientId)).toHaveLength(2);
    expect(target.received.at(-1)!.token).toBe(tokensOf(m.clientId)[1]);
  });

  describe('one token for the API and the worker, kept in their shared Redis sealed', () => {
    /** The service's raw Redis entries for a method, key → value. */
    async function stored(methodId: string): Promise<Map<string, string | null>> {
      const keys = await keysMatching(redis, sharedKeys(methodId));
      return new Map(await Promise.all(keys.map(async (key) => [key, await redis.get(key)] as const)));
    }

    function queuedForward(methodId: string) {
      return forward(methodId, { headers: { prefer: 'respond-async' } });
    }

    it('the API and the worker forwarding at once ask the endpoint once between them', async () => {
      const m = await createMethod();
      let open!: () => void;
      endpoint.behaviour.set(m.clientId, { kind: 'gate', open: new Promise<void>((resolve) => (open = resolve)) });
      // The worker asks first (a queued forward's plan holds no token): its request is held at the endpoint.
      const queued = await Promise.all(Array.from({ length: 5 }, () => queuedForward(m.id)));
      expect(queued.map((r) => r.status)).toEqual(Array(5).fill(202));
      await waitFor(() => requestsOf(m.clientId).length === 1, {
        timeoutMs: 15_000,
        what: 'the worker’s token request',
      });
      const during = await stored(m.id);
      expect([...during.keys()].map((key) => key.endsWith(':lock'))).toEqual([true]);
      const [lock] = during.keys();
      // The API's forwards find that request under way and wait for its token: seen as their checks of its lock.
      const monitor = await RedisMonitor.start();
      const lockChecks = () => monitor.commands.filter((args) => args.includes(lock));
      let synchronous: Promise<HttpResult[]>;
      try {
        synchronous = Promise.all(Array.from({ length: 5 }, () => forward(m.id)));
        await waitFor(() => lockChecks().some((args) => args[0].toLowerCase() === 'exists'), {
          timeoutMs: 10_000,
          what: 'the API waiting on the worker’s token request',
        });
      } finally {
        await monitor.stop();
      }
      open();
      expect((await synchronous).map((r) => r.status)).toEqual(Array(5).fill(200));
      for (const job of queued)
        expect((await endedJob(t.url, merchant.token, job.body.id)).body).toMatchObject({ status: 'succeeded' });
      expect(requestsOf(m.clientId)).toHaveLength(1);
      const [token] = tokensOf(m.clientId);
      expect(target.received.filter((r) => r.token === token)).toHaveLength(10);
    });

    it('Redis holds the token sealed: not in clear, nor base64 or hex of it, until it stops being used', async () => {
      const m = await createMethod();
      expect((await forward(m.id)).status).toBe(200);
      const entries = await stored(m.id);
      expect(entries.size).toBe(1); // the token; its request's lock is gone
      const [[key, value]] = [...entries];
      const [token] = tokensOf(m.clientId);
      const raw = Buffer.from(token, 'base64url');
      const spellings = [
        token,
        Buffer.from(token).toString('base64'),
        Buffer.from(token).toString('base64url'),
        Buffer.from(token).toString('hex'),
        raw.toString('base64'),
        raw.toString('hex'),
      ];
      expect(spellings.filter((spelling) => value!.includes(spelling))).toEqual([]);
      // No run of the value decodes to the token either.
      for (const run of value!.match(/[A-Za-z0-9+/=_-]{16,}/g) ?? []) {
        for (const decoded of [Buffer.from(run, 'base64'), Buffer.from(run, 'hex')]) {
          expect(decoded.includes(raw)).toBe(false);
          expect(decoded.includes(Buffer.from(token))).toBe(false);
        }
      }
      // It is the vault's envelope under the test master key, bound to this method and version (docs/vault.md).
      const sealed = JSON.parse(value!) as { k: string; w: string; c: string };
      const [masterId, masterKey] = TEST_MASTER_KEY_1.split(':');
      const master = { id: masterId, key: Buffer.from(masterKey, 'base64') };
      const blobs = { wrappedKey: Buffer.from(sealed.w, 'base64'), ciphertext: Buffer.from(sealed.c, 'base64') };
      const version = key.slice(key.lastIndexOf(':') + 1);
      expect(sealed.k).toBe(masterId);
      const opened = openVaultEnvelope(master, blobs, `oauth2-access-token\nv1\n${m.id}\n${version}`);
      expect(JSON.parse(opened!.toString('utf8'))).toMatchObject({ accessToken: token });
      expect(openVaultEnvelope(master, blobs, `oauth2-access-token\nv1\n${methodIds[0]}\n${version}`)).toBeNull();
      // Kept as long as the processes use it: a 3600 s token is dropped 60 s early.
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(3_540_000);
      // The check can fail: the test's own reading of the target holds the token.
      expect(target.received.at(-1)!.token).toBe(token);
    });

    it('a 401 in the API removes the shared token: the worker obtains a new one on its next forward', async () => {
      const m = await createMethod();
      expect((await forward(m.id)).status).toBe(200);
      const [first] = tokensOf(m.clientId);
      // The worker uses the API's token.
      const job = await endedJob(t.url, merchant.token, (await queuedForward(m.id)).body.id);
      expect(job.body).toMatchObject({ status: 'succeeded', response: { status: 200 } });
      expect(requestsOf(m.clientId)).toHaveLength(1);
      revoked.add(first);
      expect((await forward(m.id)).status).toBe(401);
      // Removed from Redis, then announced to every process.
      await waitFor(async () => (await stored(m.id)).size === 0, {
        timeoutMs: 10_000,
        what: 'the token to leave Redis',
      });
      const next = await endedJob(t.url, merchant.token, (await queuedForward(m.id)).body.id);
      expect(next.body).toMatchObject({ status: 'succeeded', response: { status: 200 } });
      expect(requestsOf(m.clientId)).toHaveLength(2);
      const second = tokensOf(m.clientId)[1];
      expect(target.received.at(-1)!.token).toBe(second);
      // …and the API takes the worker's new token from Redis.
      expect((await forward(m.id)).status).toBe(200);
      expect(requestsOf(m.clientId)).toHaveLength(2);
      expect(target.received.at(-1)!.token).toBe(second);
    });

    it('with its Redis down, a process still obtains and reuses tokens by itself', async () => {
      const m = await createMethod();
      const alone = await startTestApp({
        env: { ...env, REDIS_URL: `redis://127.0.0.1:${refusingPort}`, QUEUE_BACKEND: 'postgres' },
      });
      try {
        const viaAlone = () => forward(m.id, { url: alone.url });
        const results = await Promise.all(Array.from({ length: 5 }, viaAlone));
        expect(results.map((r) => r.status)).toEqual(Array(5).fill(200));
        expect((await viaAlone()).status).toBe(200);
        expect(requestsOf(m.clientId)).toHaveLength(1);
        expect(await stored(m.id)).toEqual(new Map());
        expect(tokensOf(m.clientId).filter((token) => alone.logs.text.includes(token))).toEqual([]);
      } finally {
        await alone.close();
      }
    });
  });

  describe('a token endpoint that fails: our 502 or 504, nothing sent to the target', () => {
    async function expectFailure(result: HttpResult, status: number, code: string, secret: string) {
      const problem = expectProblem(result, status, code);
      expect(result.headers.get('x-vault-forward-error')).toBe('true');
      expect(result.text).not.toContain(secret);
      expect(result.text).not.toContain('bad secret');
      return problem;
    }

    it.each<[string, Behaviour, string]>([
      ['answers 500 (repeating the secret)', { kind: 'status', status: 500 }, 'answered 500'],
      ['answers a body that is not JSON', { kind: 'not-json' }, 'not JSON'],
      ['answers without access_token', { kind: 'no-token' }, 'no access_token'],
    ])('%s', async (_name, behaviour, detail) => {
      const m = await createMethod();
      endpoint.behaviour.set(m.clientId, behaviour);
      const before = target.received.length;
      const problem = await expectFailure(await forward(m.id), 502, 'token-endpoint-failed', m.secret);
      expect(problem.detail).toContain(m.id);
      expect(problem.detail).toContain(detail);
      expect(target.received.length).toBe(before);
      // Not kept: once the endpoint works, the next forward gets a token.
      endpoint.behaviour.delete(m.clientId);
      expect((await forward(m.id)).status).toBe(200);
    });

    it('refuses the connection', async () => {
      const m = await createMethod({ token_url: `https://127.0.0.1:${refusingPort}/oauth2/token` });
      const problem = await expectFailure(await forward(m.id), 502, 'token-endpoint-failed', m.secret);
      expect(problem.detail).toContain('refused');
    });

    it('has a name that resolves to a loopback address: refused by the address guard', async () => {
      // `localhost` is not in FORWARD_INSECURE_HOSTS (127.0.0.1 is): its token request goes through the guard.
      const host = `localhost:${endpoint.port}`;
      const config = kept(
        await http(t.url, `/vault-forward/configs/${configId}`, {
          method: 'PUT',
          token: merchant.token,
          body: {
            hosts: [
              `127.0.0.1:${endpoint.port}`,
              `127.0.0.1:${target.port}`,
              `127.0.0.1:${refusingPort}`,
              `127.0.0.1:${plainEndpoint.port}`,
              host,
            ],
          },
        }),
      );
      expect(config.status).toBe(200);
      const m = await createMethod({ token_url: `https://${host}/oauth2/token` });
      const problem = await expectFailure(await forward(m.id), 502, 'token-endpoint-failed', m.secret);
      expect(problem.detail).toContain('loopback');
      expect(requestsOf(m.clientId)).toHaveLength(0);
    });

    it('does not answer in time: 504', async () => {
      const m = await createMethod();
      endpoint.behaviour.set(m.clientId, { kind: 'hang' });
      const before = target.received.length;
      const result = await forward(m.id, { headers: { 'x-vault-forward-timeout': '1' } });
      await expectFailure(result, 504, 'token-endpoint-timeout', m.secret);
      expect(target.received.length).toBe(before);
    });
  });

  it('the same method used by another merchant is refused, and no token is asked for', async () => {
    const m = await createMethod();
    const other = await createMerchantWithToken(t);
    const config = kept(
      await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token: other.token,
        body: { display_name: 'Same PSP', hosts: [`127.0.0.1:${endpoint.port}`, `127.0.0.1:${target.port}`] },
      }),
    );
    expect(config.status).toBe(201);
    const otherCard = await createCard(t, other.id, { number: cardNumber('4', 16), expiration_date: '05/31' });
    const result = kept(
      await http(t.url, '/vault-forward', {
        method: 'POST',
        token: other.token,
        headers: {
          'x-vault-forward-url': `${target.url}/v1/payments`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': otherCard.id,
          'x-vault-forward-authentications': m.id,
          'content-type': 'application/json',
        },
        rawBody: '{"number":"{{ CARD_NUMBER_1 }}"}',
      }),
    );
    expectProblem(result, 422, 'authentication-method-not-usable');
    expect(requestsOf(m.clientId)).toHaveLength(0);
  });

  it('no client secret or token in any answer, log line, span or raw database row', async () => {
    const secrets = [...clients.values()];
    const tokens = [...endpoint.issued.keys()];
    expect(secrets.length).toBeGreaterThan(10);
    expect(tokens.length).toBeGreaterThan(10);
    // The worker's spans of its queued forward have been exported.
    await waitFor(() => receiver.spans.length > 0, { timeoutMs: 15_000, what: 'the worker’s spans' });
    const dump = dataDump(database.url);
    expect(dump).toContain('oauth2-client-credentials');
    const texts: Array<[string, string]> = [
      ['pg_dump', dump],
      ...answers.map((a): [string, string] => ['answer', a]),
      ...logStrings(t.logs.text).map((s): [string, string] => ['api log', s]),
      ...logStrings(worker.output()).map((s): [string, string] => ['worker log', s]),
      ...receiver.spans.flatMap((s) =>
        [...s.values, ...stringsOf(s.attributes)].map((v): [string, string] => [`span ${s.name}`, v]),
      ),
    ];
    const found = texts.flatMap(([where, text]) =>
      [...secrets, ...tokens].filter((needle) => text.includes(needle)).map(() => where),
    );
    expect(found).toEqual([]);
    // The check can fail: a token is in what the test itself saw of the target.
    expect(target.received.some((r) => tokens.includes(r.token ?? ''))).toBe(true);
    expect(t.logs.text).toContain('no access token');
  });
});
