import {
  ConsumerSettings,
  EnqueueOptions,
  ForwardQueue,
  QueueUnavailableError,
} from '../../../src/platform/job-queue/forward-queue';

/** A queue that keeps what was enqueued, in order, and runs nothing: the test delivers jobs itself. */
export class FakeForwardQueue extends ForwardQueue {
  readonly backend = 'redis' as const;
  readonly enqueued: Array<{ jobId: string } & EnqueueOptions> = [];
  /** The engine down: every enqueue is refused, as the real queue refuses within about a second. */
  down = false;

  enqueue(jobId: string, options: EnqueueOptions = {}): Promise<void> {
    if (this.down) return Promise.reject(new QueueUnavailableError(this.backend, 'the fake queue is down'));
    this.enqueued.push({ jobId, ...options });
    return Promise.resolve();
  }

  isAvailable(): boolean {
    return true;
  }

  schedule(): Promise<void> {
    return Promise.resolve();
  }

  mayHaveLostJobs(): Promise<boolean> {
    return Promise.resolve(false);
  }

  markSwept(): Promise<void> {
    return Promise.resolve();
  }

  consumer(): ConsumerSettings {
    throw new Error('the fake queue has no consumer: tests call the handler themselves');
  }

  consuming(): Promise<void> {
    return Promise.reject(new Error('the fake queue has no consumer: tests call the handler themselves'));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
