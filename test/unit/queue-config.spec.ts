import { ConfigError, loadConfig } from '../../src/platform/config/config';

const DB = 'postgresql://postgres@127.0.0.1:5432/x';
const REDIS = 'redis://127.0.0.1:6379';

function error(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as Error).message).not.toContain('\n');
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('queue configuration (QUEUE_BACKEND, WORKER_CONCURRENCY, FORWARD_RETRY_BASE_MS, FORWARD_JOB_RETENTION)', () => {
  it('defaults: redis when REDIS_URL is set, else postgres (DATABASE_URL or embedded)', () => {
    expect(loadConfig({ DATABASE_URL: DB, REDIS_URL: REDIS })).toMatchObject({
      queueBackend: 'redis',
      workerConcurrency: 32,
      forwardRetryBaseMs: 1000,
      forwardJobRetentionSeconds: 7 * 86_400,
      forwardJobOverdueSeconds: 60,
      forwardJobSweepSeconds: 60,
      queueLockMs: 10_000,
    });
    expect(loadConfig({ DATABASE_URL: DB }).queueBackend).toBe('postgres');
    expect(loadConfig({}).queueBackend).toBe('postgres');
  });

  it('WORKER_HEARTBEAT_FILE: unset means no heartbeat; a relative path is resolved', () => {
    expect(loadConfig({}).workerHeartbeatFile).toBeNull();
    expect(loadConfig({ WORKER_HEARTBEAT_FILE: '/tmp/beat' }).workerHeartbeatFile).toBe('/tmp/beat');
    expect(loadConfig({ WORKER_HEARTBEAT_FILE: 'beat' }).workerHeartbeatFile).toBe(`${process.cwd()}/beat`);
  });

  it('takes an explicit engine, in any case', () => {
    expect(loadConfig({ REDIS_URL: REDIS, QUEUE_BACKEND: 'Postgres' }).queueBackend).toBe('postgres');
    expect(loadConfig({ REDIS_URL: REDIS, QUEUE_BACKEND: 'none' }).queueBackend).toBe('none');
  });

  it.each([
    [{ QUEUE_BACKEND: 'kafka' }, 'QUEUE_BACKEND: must be one of redis, postgres, none, got "kafka"'],
    [{ QUEUE_BACKEND: 'redis' }, 'QUEUE_BACKEND: is redis but REDIS_URL is unset'],
    [{ WORKER_CONCURRENCY: '0' }, 'WORKER_CONCURRENCY: must be between 1 and 1024, got 0'],
    [{ WORKER_CONCURRENCY: 'lots' }, 'WORKER_CONCURRENCY: must be a whole number'],
    [{ FORWARD_RETRY_BASE_MS: '1s' }, 'FORWARD_RETRY_BASE_MS: must be a whole number'],
    [{ FORWARD_JOB_RETENTION: '7 days' }, 'FORWARD_JOB_RETENTION: must be a duration like 7d'],
    [{ FORWARD_JOB_RETENTION: '10s' }, 'FORWARD_JOB_RETENTION: must be between 60s and'],
    [{ FORWARD_JOB_RETENTION: '400d' }, 'FORWARD_JOB_RETENTION: must be between 60s and'],
    [{ FORWARD_JOB_OVERDUE: '0' }, 'FORWARD_JOB_OVERDUE: must be between 1s and'],
    [{ FORWARD_JOB_SWEEP_INTERVAL: '2 min' }, 'FORWARD_JOB_SWEEP_INTERVAL: must be a duration like 7d'],
    [{ QUEUE_LOCK_DURATION_MS: '500' }, 'QUEUE_LOCK_DURATION_MS: must be between 1000 and 300000, got 500'],
  ])('%p fails with one line naming the variable', (env, message) => {
    expect(error(env)).toContain(message);
  });

  it.each([
    ['7d', 604_800],
    ['12h', 43_200],
    ['30m', 1_800],
    ['90s', 90],
    ['3600', 3_600],
    ['2D', 172_800],
  ])('FORWARD_JOB_RETENTION=%s is %d seconds', (raw, seconds) => {
    expect(loadConfig({ FORWARD_JOB_RETENTION: raw }).forwardJobRetentionSeconds).toBe(seconds);
  });

  it('takes the housekeeping and lock settings', () => {
    expect(
      loadConfig({ FORWARD_JOB_OVERDUE: '5s', FORWARD_JOB_SWEEP_INTERVAL: '2m', QUEUE_LOCK_DURATION_MS: '3000' }),
    ).toMatchObject({
      forwardJobOverdueSeconds: 5,
      forwardJobSweepSeconds: 120,
      queueLockMs: 3_000,
    });
  });
});
