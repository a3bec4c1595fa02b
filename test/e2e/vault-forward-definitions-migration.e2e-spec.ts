import { DataSource } from 'typeorm';
import { createDataSource } from '../../src/platform/database/data-source';
import { runMigrations } from '../../src/platform/database/migrate';
import { createApiKey } from '../factories/api-keys';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { http } from '../support/http';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Configs made before definitions existed (issue 22, item 2): the migration gives each its own
 * generated custom definition, and they forward as before, unchanged. A database of its own, set back
 * to the schema before that migration.
 */
const DEFINITIONS = 'VaultForwardDefinitions1763930000000';

describe('the definitions migration keeps configs made before it', () => {
  let database: IsolatedDatabase;
  let downstream: Downstream;
  let t: TestApp | undefined;
  const configId = '6d1f3a52-0d54-4c1e-8d1b-1f2e3d4c5b6a';

  beforeAll(async () => {
    database = await createIsolatedDatabase('definitions_migration');
    downstream = await startHttpDownstream();
    const dataSource: DataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
    try {
      // Back to the schema before the definitions migration: the migrations after it first, newest first.
      const lastApplied = async () =>
        (
          await dataSource.query<Array<{ name: string }>>(`SELECT name FROM schema_migrations ORDER BY id DESC LIMIT 1`)
        )[0].name;
      const undone: string[] = [];
      while (!undone.includes(DEFINITIONS)) {
        undone.push(await lastApplied());
        await dataSource.undoLastMigration({ transaction: 'each' });
      }
      expect(await lastApplied()).not.toBe(DEFINITIONS);
      await dataSource.query(`INSERT INTO merchant_accounts (id, display_name) VALUES ('before', 'Before')`);
      await dataSource.query(
        `INSERT INTO vault_forward_configs (id, merchant_account_id, display_name, hosts, methods, enabled)
         VALUES ($1, 'before', 'Made before', $2, '{POST}', true)`,
        [configId, [`127.0.0.1:${downstream.port}`]],
      );
      expect(await runMigrations(dataSource)).toEqual(undone.reverse());
    } finally {
      await dataSource.destroy();
    }
    t = await startTestApp({ env: { DATABASE_URL: database.url, FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
  });
  afterAll(async () => {
    await t?.close();
    await downstream.close();
    await database.drop();
  });

  it('has a custom definition and forwards as before', async () => {
    const token = await (await createApiKey(t!, 'before')).token();
    const config = await http(t!.url, `/vault-forward/configs/${configId}`, { token });
    expect(config.body).toMatchObject({
      definition_id: `custom-${configId}`,
      display_name: 'Made before',
      hosts: [`127.0.0.1:${downstream.port}`],
      methods: ['POST'],
      enabled: true,
    });
    const definition = await http(t!.url, `/vault-forward/definitions/custom-${configId}`, { token });
    expect(definition.body).toMatchObject({ source: 'custom', hosts: [`127.0.0.1:${downstream.port}`] });
    const forwarded = await http(t!.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${downstream.url}/before`,
        'x-vault-forward-http-method': 'POST',
        'content-type': 'application/json',
      },
      rawBody: '{"a":1}',
    });
    expect(forwarded.status).toBe(200);
    expect(downstream.received.at(-1)).toMatchObject({ url: '/before' });
  });
});
