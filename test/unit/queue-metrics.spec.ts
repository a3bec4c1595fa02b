import { Logger } from '@nestjs/common';
import { Metrics } from '../../src/platform/metrics/metrics.service';
import { QueueMetrics, QueueState } from '../../src/platform/metrics/queue-metrics';

/** The lines of a scrape that start with `prefix`, in order. */
async function lines(metrics: Metrics, prefix: string): Promise<string[]> {
  const { body } = await metrics.scrape();
  return body.split('\n').filter((line) => line.startsWith(prefix));
}

const state = (name: string, depth: number, age: number, created: number): QueueState => ({
  state: name,
  depth,
  oldestAgeSeconds: age,
  oldestCreatedSeconds: created,
});

describe('QueueMetrics: the queue gauges, read at scrape time', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(new Logger()));

  it('shows every state of each queue (0 when no row is in it) and the backlog over them all', async () => {
    const metrics = new Metrics();
    const queues = new QueueMetrics(metrics);
    queues.watch('forward', ['waiting', 'delayed', 'running'], () =>
      Promise.resolve([state('waiting', 2, 1.5, 9), state('running', 1, 0.25, 4)]),
    );
    queues.watch('callback', ['waiting', 'waiting_for_secret'], () => Promise.resolve([]));
    expect(await lines(metrics, 'vault_forward_queue_')).toEqual([
      'vault_forward_queue_depth{queue="forward",state="waiting"} 2',
      'vault_forward_queue_depth{queue="forward",state="delayed"} 0',
      'vault_forward_queue_depth{queue="forward",state="running"} 1',
      'vault_forward_queue_depth{queue="callback",state="waiting"} 0',
      'vault_forward_queue_depth{queue="callback",state="waiting_for_secret"} 0',
      'vault_forward_queue_oldest_age_seconds{queue="forward",state="waiting"} 1.5',
      'vault_forward_queue_oldest_age_seconds{queue="forward",state="delayed"} 0',
      'vault_forward_queue_oldest_age_seconds{queue="forward",state="running"} 0.25',
      'vault_forward_queue_oldest_age_seconds{queue="callback",state="waiting"} 0',
      'vault_forward_queue_oldest_age_seconds{queue="callback",state="waiting_for_secret"} 0',
      'vault_forward_queue_backlog{queue="forward"} 3',
      'vault_forward_queue_backlog{queue="callback"} 0',
      'vault_forward_queue_backlog_oldest_age_seconds{queue="forward"} 9',
      'vault_forward_queue_backlog_oldest_age_seconds{queue="callback"} 0',
    ]);
  });

  it('reads each queue once per scrape, whatever number of series wait for it', async () => {
    const metrics = new Metrics();
    const queues = new QueueMetrics(metrics);
    const read = jest.fn(() => Promise.resolve([state('waiting', 1, 1, 1)]));
    queues.watch('forward', ['waiting'], read);
    await metrics.scrape();
    expect(read).toHaveBeenCalledTimes(1);
    await metrics.scrape();
    expect(read).toHaveBeenCalledTimes(2);
  });

  it('a read that never answers: the scrape answers within the bound, without the queue, counting it in that scrape', async () => {
    const metrics = new Metrics();
    const queues = new QueueMetrics(metrics);
    const read = jest.fn(() => new Promise<QueueState[]>(() => undefined));
    queues.watch('forward', ['waiting'], read);
    queues.watch('callback', ['waiting'], () => Promise.resolve([state('waiting', 4, 2, 2)]));
    expect(await lines(metrics, 'vault_forward_queue_depth')).toEqual([
      'vault_forward_queue_depth{queue="callback",state="waiting"} 4',
    ]);
    expect(await lines(metrics, 'vault_forward_metrics_collect_errors_total')).toEqual([
      'vault_forward_metrics_collect_errors_total{source="queue_forward"} 2',
    ]);
    // The second scrape waited for the same read: a database that does not answer holds one query, not one per scrape.
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('a read that fails leaves the queue out (no stale depth) until one succeeds again', async () => {
    const metrics = new Metrics();
    const queues = new QueueMetrics(metrics);
    let answer: () => Promise<QueueState[]> = () => Promise.resolve([state('waiting', 7, 3, 3)]);
    queues.watch('forward', ['waiting'], () => answer());
    expect(await lines(metrics, 'vault_forward_queue_backlog{')).toEqual([
      'vault_forward_queue_backlog{queue="forward"} 7',
    ]);
    answer = () => Promise.reject(new Error('connect ECONNREFUSED'));
    expect(await lines(metrics, 'vault_forward_queue_')).toEqual([]);
    answer = () => Promise.resolve([]);
    expect(await lines(metrics, 'vault_forward_queue_backlog{')).toEqual([
      'vault_forward_queue_backlog{queue="forward"} 0',
    ]);
    expect(await lines(metrics, 'vault_forward_metrics_collect_errors_total')).toEqual([
      'vault_forward_metrics_collect_errors_total{source="queue_forward"} 1',
    ]);
  });

  it('a queue registered twice (a module loaded by both sides of one process) is read once', async () => {
    const metrics = new Metrics();
    const queues = new QueueMetrics(metrics);
    const first = jest.fn(() => Promise.resolve([state('waiting', 1, 1, 1)]));
    const second = jest.fn(() => Promise.resolve([state('waiting', 1, 1, 1)]));
    queues.watch('forward', ['waiting'], first);
    queues.watch('forward', ['waiting'], second);
    expect(await lines(metrics, 'vault_forward_queue_backlog{')).toEqual([
      'vault_forward_queue_backlog{queue="forward"} 1',
    ]);
    expect([first.mock.calls.length, second.mock.calls.length]).toEqual([0, 1]);
  });

  it('a plain gauge whose read fails keeps its last value and counts the failure in the same scrape', async () => {
    const metrics = new Metrics();
    let fail = false;
    metrics.gauge('test_figure', 'a figure', () => {
      if (fail) throw new Error('unreadable');
      return 5;
    });
    expect(await lines(metrics, 'vault_forward_test_figure')).toEqual(['vault_forward_test_figure 5']);
    fail = true;
    expect(await lines(metrics, 'vault_forward_test_figure')).toEqual(['vault_forward_test_figure 5']);
    expect(await lines(metrics, 'vault_forward_metrics_collect_errors_total')).toEqual([
      'vault_forward_metrics_collect_errors_total{source="test_figure"} 2',
    ]);
  });
});
