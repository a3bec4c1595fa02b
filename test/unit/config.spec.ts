import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig, parseVaultMasterKeys } from '../../src/platform/config/config';
import { TEST_LEDGER_KEY } from '../support/ledger-key';

const key = (byte: number) => Buffer.alloc(32, byte).toString('base64');

describe('loadConfig', () => {
  it('has working defaults with nothing set (embedded database, no Redis)', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      logLevel: 'info',
      databaseUrl: null,
      redisUrl: null,
    });
    expect(config.vaultMasterKeys).toEqual([]);
    expect(config.http).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 72_000,
      maxConnectionsPerIp: 256,
    });
    expect(loadConfig({ HTTP_MAX_CONNECTIONS_PER_IP: '0' }).http.maxConnectionsPerIp).toBe(0);
  });

  it('routes what needs a session past a transaction pooler only when told (decision 0108)', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://db/x' }).database).toEqual({
      transactionPooling: false,
      directUrl: null,
    });
    const pooled = { DATABASE_URL: 'postgres://bouncer/x', DATABASE_TRANSACTION_POOLING: 'true' };
    // The Redis queue needs no session of PostgreSQL's; the PostgreSQL one must name its direct URL.
    expect(loadConfig({ ...pooled, REDIS_URL: 'redis://r' }).database).toEqual({
      transactionPooling: true,
      directUrl: null,
    });
    expect(loadConfig({ ...pooled, QUEUE_BACKEND: 'none' }).database.transactionPooling).toBe(true);
    expect(loadConfig({ ...pooled, DATABASE_DIRECT_URL: 'postgres://db/x' }).database).toEqual({
      transactionPooling: true,
      directUrl: 'postgres://db/x',
    });
  });

  it.each([
    [{ PORT: '70000' }, 'PORT: must be between 0 and 65535'],
    [{ PORT: '3.5' }, 'PORT: must be a whole number'],
    [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL: must be one of'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV: must be development, production or test'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL: is not a valid URL'],
    [{ REDIS_URL: 'http://localhost' }, 'REDIS_URL: must use redis:// or rediss://'],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE: must be between 1 and 200'],
    [{ HTTP_HEADERS_TIMEOUT_MS: '0' }, 'HTTP_HEADERS_TIMEOUT_MS: must be between 100 and 600000'],
    [
      { HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' },
      'HTTP_REQUEST_TIMEOUT_MS: must not be below HTTP_HEADERS_TIMEOUT_MS (20000)',
    ],
    [{ HTTP_MAX_CONNECTIONS_PER_IP: '-1' }, 'HTTP_MAX_CONNECTIONS_PER_IP: must be a whole number'],
    [{ WEB_CONCURRENCY: '0' }, 'WEB_CONCURRENCY: must be between 1 and 256'],
    [{ WEB_CONCURRENCY: '2' }, 'WEB_CONCURRENCY: must be 1 without DATABASE_URL'],
    [{ WORKER_PROCESSES: '3' }, 'WORKER_PROCESSES: must be 1 without DATABASE_URL'],
    [{ REDIS_SENTINELS: 'h:26379', REDIS_SENTINEL_NAME: 'm' }, 'REDIS_SENTINELS: needs REDIS_URL too'],
    [{ REDIS_URL: 'redis://x', REDIS_SENTINELS: 'h:26379' }, 'REDIS_SENTINEL_NAME: is required with REDIS_SENTINELS'],
    [{ REDIS_URL: 'redis://x', REDIS_SENTINEL_NAME: 'm' }, 'REDIS_SENTINEL_NAME: is set but REDIS_SENTINELS is unset'],
    [{ REDIS_SENTINEL_PASSWORD: 'p' }, 'REDIS_SENTINEL_PASSWORD: is set but REDIS_SENTINELS is unset'],
    [
      { REDIS_URL: 'redis://x', REDIS_SENTINELS: 'h', REDIS_SENTINEL_NAME: 'm' },
      'REDIS_SENTINELS: "h" is not host:port',
    ],
    [
      { REDIS_URL: 'redis://x', REDIS_SENTINELS: 'h:0', REDIS_SENTINEL_NAME: 'm' },
      'REDIS_SENTINELS: "h:0" is not host:port',
    ],
    [{ REDIS_URL: 'redis://x', REDIS_SENTINELS: ' , ', REDIS_SENTINEL_NAME: 'm' }, 'REDIS_SENTINELS: must list 1–32'],
    [
      { REDIS_URL: 'redis://x', REDIS_SENTINELS: 'h:1', REDIS_SENTINEL_NAME: 'a b' },
      'REDIS_SENTINEL_NAME: must be 1–64 letters',
    ],
    [{ DATABASE_TRANSACTION_POOLING: 'true' }, 'DATABASE_TRANSACTION_POOLING: needs DATABASE_URL'],
    [{ DATABASE_DIRECT_URL: 'postgres://db/x' }, 'DATABASE_DIRECT_URL: needs DATABASE_URL'],
    [{ DATABASE_URL: 'postgres://b/x', DATABASE_TRANSACTION_POOLING: 'maybe' }, 'must be true or false, got "maybe"'],
    [
      { DATABASE_URL: 'postgres://b/x', DATABASE_DIRECT_URL: 'http://db/x' },
      'DATABASE_DIRECT_URL: must use postgres://',
    ],
    [
      { DATABASE_URL: 'postgres://b/x', DATABASE_TRANSACTION_POOLING: 'true' },
      'DATABASE_DIRECT_URL: is required with DATABASE_TRANSACTION_POOLING and the postgres queue backend',
    ],
    [{ REDIS_CLUSTER_NODES: 'h:7000' }, 'REDIS_CLUSTER_NODES: needs REDIS_URL too'],
    [{ REDIS_URL: 'redis://x', REDIS_CLUSTER_NODES: 'h' }, 'REDIS_CLUSTER_NODES: "h" is not host:port'],
    [{ REDIS_URL: 'redis://x', REDIS_CLUSTER_NODES: 'h:70000' }, 'REDIS_CLUSTER_NODES: "h:70000" is not host:port'],
    [{ REDIS_URL: 'redis://x', REDIS_CLUSTER_NODES: 'h:7000,h 2:7001' }, 'REDIS_CLUSTER_NODES: "h 2:7001" is not'],
    [{ REDIS_URL: 'redis://x', REDIS_CLUSTER_NODES: ' , ' }, 'REDIS_CLUSTER_NODES: must list 1–32'],
    [
      { REDIS_URL: 'redis://x', REDIS_CLUSTER_NODES: Array.from({ length: 33 }, (_, i) => `h:${7000 + i}`).join(',') },
      'REDIS_CLUSTER_NODES: must list 1–32',
    ],
    [
      { REDIS_URL: 'redis://x', REDIS_CLUSTER_NODES: 'h:7000', REDIS_SENTINELS: 'h:26379', REDIS_SENTINEL_NAME: 'm' },
      'REDIS_CLUSTER_NODES: and REDIS_SENTINELS exclude each other',
    ],
    [{ REDIS_URL: 'redis://x/3', REDIS_CLUSTER_NODES: 'h:7000' }, 'REDIS_URL: must name database 0'],
    [{ NETWORK_TOKEN_REQUESTOR_URL: 'not a url' }, 'NETWORK_TOKEN_REQUESTOR_URL: is not a valid URL'],
    [{ NETWORK_TOKEN_REQUESTOR_URL: 'ftp://tr.example' }, 'NETWORK_TOKEN_REQUESTOR_URL: must use https:// or http://'],
    [
      { NETWORK_TOKEN_REQUESTOR_URL: 'https://u:p@tr.example/c' },
      'NETWORK_TOKEN_REQUESTOR_URL: must not carry credentials',
    ],
    [
      { NETWORK_TOKEN_REQUESTOR_AUTHORIZATION: 'Bearer x' },
      'NETWORK_TOKEN_REQUESTOR_AUTHORIZATION: is set but NETWORK_TOKEN_REQUESTOR_URL is not',
    ],
    [
      { NETWORK_TOKEN_REQUESTOR_URL: 'https://tr.example/c', NETWORK_TOKEN_REQUESTOR_TIMEOUT_MS: '50' },
      'NETWORK_TOKEN_REQUESTOR_TIMEOUT_MS: must be between 100 and 30000',
    ],
    [{ FORWARD_RECORD_BODY_RETENTION_DAYS: '-1' }, 'FORWARD_RECORD_BODY_RETENTION_DAYS: must be a whole number'],
    [{ FORWARD_RECORD_BODY_RETENTION_DAYS: '30d' }, 'FORWARD_RECORD_BODY_RETENTION_DAYS: must be a whole number'],
    [{ FORWARD_RECORD_BODY_RETENTION_DAYS: '31' }, 'FORWARD_RECORD_BODY_RETENTION_DAYS: must be between 0 and 30'],
    [{ FORWARD_RECORD_BODY_RETENTION_DAYS: '3650' }, 'FORWARD_RECORD_BODY_RETENTION_DAYS: must be between 0 and 30'],
    [{ FORWARD_JOB_ANSWER_RETENTION: '1 day' }, 'FORWARD_JOB_ANSWER_RETENTION: must be a duration like 7d'],
    [{ FORWARD_JOB_ANSWER_RETENTION: '30s' }, 'FORWARD_JOB_ANSWER_RETENTION: must be between 60s and'],
    [{ FORWARD_JOB_ANSWER_RETENTION: '8d' }, 'FORWARD_JOB_ANSWER_RETENTION: must be between 60s and'],
  ])('refuses %p with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('caps the days a config may keep forward record bodies at 30 by default; 0 turns recording off (decision 0138)', () => {
    expect(loadConfig({}).forwardRecordBodyRetentionDays).toBe(30);
    expect(loadConfig({ FORWARD_RECORD_BODY_RETENTION_DAYS: '0' }).forwardRecordBodyRetentionDays).toBe(0);
    expect(loadConfig({ FORWARD_RECORD_BODY_RETENTION_DAYS: '7' }).forwardRecordBodyRetentionDays).toBe(7);
  });

  it("keeps a queued forward's answer 24 h at most by default; an operator may allow up to 7 days (decision 0139)", () => {
    expect(loadConfig({}).forwardJobAnswerRetentionSeconds).toBe(86_400);
    expect(loadConfig({ FORWARD_JOB_ANSWER_RETENTION: '1h' }).forwardJobAnswerRetentionSeconds).toBe(3_600);
    expect(loadConfig({ FORWARD_JOB_ANSWER_RETENTION: '7d' }).forwardJobAnswerRetentionSeconds).toBe(7 * 86_400);
  });

  it('reads the token requestor: none by default; a URL, its authorization and a 5 s timeout otherwise', () => {
    expect(loadConfig({}).networkTokenRequestor).toBeNull();
    expect(loadConfig({ NETWORK_TOKEN_REQUESTOR_URL: 'https://tr.example/cryptograms' }).networkTokenRequestor).toEqual(
      {
        url: 'https://tr.example/cryptograms',
        authorization: null,
        timeoutMs: 5000,
      },
    );
    const set = loadConfig({
      NETWORK_TOKEN_REQUESTOR_URL: 'http://127.0.0.1:9/c',
      NETWORK_TOKEN_REQUESTOR_AUTHORIZATION: 'Bearer s3cret',
      NETWORK_TOKEN_REQUESTOR_TIMEOUT_MS: '250',
    }).networkTokenRequestor;
    expect(set).toEqual({ url: 'http://127.0.0.1:9/c', authorization: 'Bearer s3cret', timeoutMs: 250 });
  });

  it('runs one process of each kind unless production with a database, where it is one per core', () => {
    const database = { DATABASE_URL: 'postgresql://db/vault' };
    expect(loadConfig({})).toMatchObject({ webConcurrency: 1, workerProcesses: 1 });
    expect(loadConfig(database)).toMatchObject({ webConcurrency: 1, workerProcesses: 1 });
    const production = {
      ...database,
      NODE_ENV: 'production',
      VAULT_MASTER_KEYS: `k1:${key(1)}`,
      CURSOR_SECRET: 'a-cursor-secret-of-at-least-thirty-two-characters',
      LEDGER_SIGNING_KEY: TEST_LEDGER_KEY,
    };
    expect(loadConfig(production)).toMatchObject({
      webConcurrency: availableParallelism(),
      workerProcesses: availableParallelism(),
    });
    expect(loadConfig({ ...production, WEB_CONCURRENCY: '3', WORKER_PROCESSES: '2' })).toMatchObject({
      webConcurrency: 3,
      workerProcesses: 2,
    });
  });

  it("reads Redis Sentinel: host:port list (IPv6 in brackets), the master name, the sentinels' password", () => {
    expect(loadConfig({ REDIS_URL: 'redis://:pw@ignored:6379/2' }).redisSentinel).toBeNull();
    expect(
      loadConfig({
        REDIS_URL: 'redis://:pw@ignored:6379/2',
        REDIS_SENTINELS: 's1:26379, [::1]:26380',
        REDIS_SENTINEL_NAME: 'mymaster',
        REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
      }).redisSentinel,
    ).toEqual({
      sentinels: [
        { host: 's1', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      name: 'mymaster',
      password: 'sentinel-secret',
    });
  });

  it('reads Redis Cluster: host:port list (IPv6 in brackets), REDIS_URL with database 0 or none', () => {
    expect(loadConfig({ REDIS_URL: 'redis://:pw@ignored:6379/2' }).redisCluster).toBeNull();
    expect(
      loadConfig({ REDIS_URL: 'rediss://u:pw@ignored:6379', REDIS_CLUSTER_NODES: 'n1:7000, [::1]:7001,10.0.0.3:7002' })
        .redisCluster,
    ).toEqual({
      nodes: [
        { host: 'n1', port: 7000 },
        { host: '::1', port: 7001 },
        { host: '10.0.0.3', port: 7002 },
      ],
    });
    expect(loadConfig({ REDIS_URL: 'redis://x/0', REDIS_CLUSTER_NODES: 'h:7000' }).redisCluster?.nodes).toHaveLength(1);
  });

  it('never echoes a database URL (it may hold a password)', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://u:hunter2@h/d' })).toThrow(/^(?!.*hunter2)/);
  });
});

describe('SECURE_FIELDS_ORIGIN (decision 0140)', () => {
  const production = {
    DATABASE_URL: 'postgres://db/x',
    NODE_ENV: 'production',
    VAULT_MASTER_KEYS: `k1:${key(1)}`,
    CURSOR_SECRET: 'a-cursor-secret-of-at-least-thirty-two-characters',
    LEDGER_SIGNING_KEY: TEST_LEDGER_KEY,
  };

  it('defaults to secure-fields.localhost on PORT outside production, and is off in production until set', () => {
    expect(loadConfig({}).secureFieldsOrigin).toBe('http://secure-fields.localhost:3000');
    expect(loadConfig({ PORT: '8080', NODE_ENV: 'test' }).secureFieldsOrigin).toBe(
      'http://secure-fields.localhost:8080',
    );
    expect(loadConfig(production).secureFieldsOrigin).toBeNull();
  });

  it('takes an origin, normalised', () => {
    expect(loadConfig({ SECURE_FIELDS_ORIGIN: 'http://Fields.localhost:4000/' }).secureFieldsOrigin).toBe(
      'http://fields.localhost:4000',
    );
    expect(
      loadConfig({ ...production, SECURE_FIELDS_ORIGIN: 'https://Secure-Fields.Example.com:443' }).secureFieldsOrigin,
    ).toBe('https://secure-fields.example.com');
  });

  it.each([
    ['https://fields.example.com/frames', 'no path'],
    ['https://fields.example.com?x=1', 'no path, query or fragment'],
    ['https://user:pw@fields.example.com', 'must not carry a user or password'],
    ['ftp://fields.example.com', 'must use https://'],
    ['http://fields.example.com', 'http:// only for localhost'],
    ['fields.example.com', 'must be an origin'],
  ])('refuses %p anywhere', (raw, message) => {
    expect(() => loadConfig({ SECURE_FIELDS_ORIGIN: raw })).toThrow(`SECURE_FIELDS_ORIGIN: `);
    expect(() => loadConfig({ SECURE_FIELDS_ORIGIN: raw })).toThrow(message);
  });

  it.each([
    ['http://secure-fields.localhost:3000', 'https origin on a public host'],
    ['https://secure-fields.localhost', 'https origin on a public host'],
    ['https://203.0.113.7', 'not an address'],
    ['https://[2001:db8::1]', 'not an address'],
  ])('refuses %p in production', (raw, message) => {
    expect(() => loadConfig({ ...production, SECURE_FIELDS_ORIGIN: raw })).toThrow(message);
  });

  it('refuses the address the API listens on in production', () => {
    expect(() =>
      loadConfig({ ...production, HOST: 'api.example.com', SECURE_FIELDS_ORIGIN: 'https://api.example.com' }),
    ).toThrow('a host of its own');
  });
});

describe('parseVaultMasterKeys', () => {
  it('accepts a comma list, the first key being current', () => {
    const keys = parseVaultMasterKeys(`k2:${key(2)}, k1:${key(1)}`);
    expect(keys.map((k) => k.id)).toEqual(['k2', 'k1']);
    expect(keys[0].key).toEqual(Buffer.alloc(32, 2));
  });

  it('accepts JSON strings and objects', () => {
    expect(parseVaultMasterKeys(JSON.stringify([`a:${key(1)}`])).map((k) => k.id)).toEqual(['a']);
    expect(parseVaultMasterKeys(JSON.stringify([{ id: 'b', key: key(3) }])).map((k) => k.id)).toEqual(['b']);
  });

  it.each([
    ['k1', 'must be "id:base64key"'],
    [`k1:${Buffer.alloc(16).toString('base64')}`, 'must be 32 bytes'],
    [`k1:${key(1)},k1:${key(2)}`, 'appears twice'],
    [`bad id:${key(1)}`, 'invalid id'],
    ['[not json', 'does not parse'],
  ])('refuses %p', (raw, message) => {
    expect(() => parseVaultMasterKeys(raw)).toThrow(message);
  });
});
