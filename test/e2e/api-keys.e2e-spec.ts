import { TokenVerifier } from '../../src/modules/merchants/auth/token-verifier.service';
import { SharedCaches } from '../../src/platform/redis/shared-cache';
import { createApiKey, TestKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectProblem, http } from '../support/http';
import { ProbeModule } from '../support/probe.module';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

describe('API keys: listing and revocation', () => {
  let a: TestApp;
  let merchantA: string;
  let merchantB: string;
  let instance: TestKey;
  let instanceToken: string;

  beforeAll(async () => {
    a = await startTestApp({ imports: [ProbeModule] });
    merchantA = (await createMerchantAccount(a)).id;
    merchantB = (await createMerchantAccount(a)).id;
    instance = await createApiKey(a, null);
    instanceToken = await instance.token();
  });
  afterAll(() => a.close());

  const revoke = (id: string, token: string, headers: Record<string, string> = {}) =>
    http(a.url, `/api-keys/${encodeURIComponent(id)}`, { method: 'DELETE', token, headers });

  it('lists keys newest first with the shared pagination; instance keys filter by merchant account', async () => {
    const first = await createApiKey(a, merchantA, 'ES256');
    const second = await createApiKey(a, merchantA);
    await createApiKey(a, merchantB);

    const page1 = await http(a.url, `/api-keys?merchant_account_id=${merchantA}&limit=1`, { token: instanceToken });
    expect(page1.status).toBe(200);
    expect(page1.body.items).toEqual([
      {
        type: 'api-key',
        id: second.id,
        merchant_account_id: merchantA,
        algorithm: 'ES512',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/),
        revoked_at: null,
      },
    ]);
    expect(page1.body.next_cursor).toEqual(expect.any(String));
    const page2 = await http(
      a.url,
      `/api-keys?merchant_account_id=${merchantA}&limit=1&cursor=${page1.body.next_cursor}`,
      {
        token: instanceToken,
      },
    );
    expect(page2.body.items.map((k: { id: string }) => k.id)).toEqual([first.id]);
    expect(page2.body.items[0].algorithm).toBe('ES256');
    // No key material of any kind.
    expect(page1.text).not.toMatch(/"(d|x|y|public_key|private_key)"/);

    // A cursor is bound to its filter.
    const moved = await http(a.url, `/api-keys?merchant_account_id=${merchantB}&cursor=${page1.body.next_cursor}`, {
      token: instanceToken,
    });
    expectProblem(moved, 400, 'invalid-cursor');
    expectProblem(
      await http(a.url, '/api-keys?merchant_account_id=Not%20A%20Slug', { token: instanceToken }),
      400,
      'validation-failed',
    );
  });

  it('shows a merchant key only its own merchant account’s keys, whatever it filters by', async () => {
    const own = await createApiKey(a, merchantB);
    const token = await own.token();
    const list = await http(a.url, '/api-keys?limit=100', { token });
    expect(list.status).toBe(200);
    expect(list.body.items.length).toBeGreaterThan(0);
    expect(list.body.items.every((k: { merchant_account_id: string }) => k.merchant_account_id === merchantB)).toBe(
      true,
    );
    expect(list.body.items.map((k: { id: string }) => k.id)).toContain(own.id);
    const other = await http(a.url, `/api-keys?merchant_account_id=${merchantA}`, { token });
    expect(other.body.items).toEqual([]);
    // Naming another merchant in the header is refused as on every route.
    expectProblem(
      await http(a.url, '/api-keys', { token, headers: { 'x-merchant-account-id': merchantA } }),
      403,
      'merchant-account-mismatch',
    );
  });

  it('requires the api-keys scopes (or a wildcard)', async () => {
    const key = await createApiKey(a, merchantA);
    const target = await createApiKey(a, merchantA);
    expectProblem(await http(a.url, '/api-keys', { token: await key.token(['buyers.read']) }), 403, 'forbidden');
    expect((await http(a.url, '/api-keys', { token: await key.token(['api-keys.read']) })).status).toBe(200);
    expectProblem(await revoke(target.id, await key.token(['api-keys.read', '*.read'])), 403, 'forbidden');
    expect((await revoke(target.id, await key.token(['api-keys.write']))).status).toBe(204);
    expectProblem(await http(a.url, '/api-keys'), 401, 'unauthorized');
  });

  it('revokes: revoked_at is set, the row stays, and neither old nor new tokens of the key work', async () => {
    const key = await createApiKey(a, merchantA);
    const oldToken = await key.token();
    expect((await http(a.url, '/__probe/merchant', { token: oldToken })).status).toBe(200); // now cached

    const result = await revoke(key.id, instanceToken);
    expect(result.status).toBe(204);
    expect(result.text).toBe('');

    expectProblem(await http(a.url, '/__probe/merchant', { token: oldToken }), 401, 'unauthorized');
    expectProblem(await http(a.url, '/__probe/merchant', { token: await key.token() }), 401, 'unauthorized');

    const [row] = await a.db.query('SELECT revoked_at FROM api_keys WHERE id = $1', [key.id]);
    expect(row.revoked_at).not.toBeNull();
    const listed = await http(a.url, `/api-keys?merchant_account_id=${merchantA}&limit=100`, { token: instanceToken });
    const item = listed.body.items.find((k: { id: string }) => k.id === key.id);
    expect(item.revoked_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);

    // Revoking again, or an unknown key, is a 404.
    expectProblem(await revoke(key.id, instanceToken), 404, 'api-key-not-found');
    expectProblem(await revoke('no-such-key', instanceToken), 404, 'api-key-not-found');
  });

  it('lets a merchant key revoke its own merchant account’s keys only; another merchant’s key is a 404', async () => {
    const mine = await createApiKey(a, merchantA);
    const theirs = await createApiKey(a, merchantB);
    const token = await (await createApiKey(a, merchantA)).token();
    const body = expectProblem(await revoke(theirs.id, token), 404, 'api-key-not-found');
    expect(body.errors).toEqual([{ location: 'path', name: 'id', message: expect.any(String) }]);
    expectProblem(await revoke(instance.id, token), 404, 'api-key-not-found');
    expect((await http(a.url, '/__probe/merchant', { token: await theirs.token() })).status).toBe(200);
    expect((await revoke(mine.id, token)).status).toBe(204);
  });

  it('a token verified and cached in another process stops working there on the revocation, not at the cache’s expiry', async () => {
    const b = await startTestApp({ imports: [ProbeModule] });
    try {
      await b.get(SharedCaches).whenSubscribed();
      const key = await createApiKey(a, merchantA, 'ES256');
      const token = await key.token();
      const verifier = b.get(TokenVerifier);
      expect((await http(b.url, '/__probe/merchant', { token })).status).toBe(200);
      const verifications = verifier.verifications;
      expect((await http(b.url, '/__probe/merchant', { token })).status).toBe(200);
      expect(verifier.verifications).toBe(verifications); // served from B's cache

      expect((await revoke(key.id, instanceToken)).status).toBe(204);
      // Well inside the 60 s B would otherwise serve the token from its cache (KEY_CACHE_TTL_MS): the revocation's message did it.
      await waitFor(async () => (await http(b.url, '/__probe/merchant', { token })).status === 401, {
        timeoutMs: 10_000,
        intervalMs: 0,
        what: 'the revoked token to be refused by the other process',
      });
    } finally {
      await b.close();
    }
  });
});
