import type { AppConfig } from '../../src/platform/config/config';
import type { ForwardQueue } from '../../src/platform/job-queue/forward-queue';
import type { CallbackDeliveries } from '../../src/modules/forwarding/callbacks/callback-deliveries';
import { ForwardJobHousekeeping } from '../../src/modules/forwarding/jobs/forward-job-housekeeping';
import type { ForwardJobsRepository } from '../../src/modules/forwarding/jobs/forward-jobs.repository';
import type { LostJobRecovery } from '../../src/modules/forwarding/jobs/lost-job-recovery';

describe('ForwardJobHousekeeping start pass', () => {
  afterEach(() => jest.useRealTimers());

  it('stops its quiet tries at shutdown: no pass runs on closed connections, nothing is logged', async () => {
    jest.useFakeTimers();
    let passes = 0;
    // The tables of a new database are not there yet (undefined_table) for as long as the test runs.
    const lostJobs = {
      recover: () => {
        passes += 1;
        return Promise.reject(Object.assign(new Error('relation "forward_jobs" does not exist'), { code: '42P01' }));
      },
    } as unknown as LostJobRecovery;
    const housekeeping = new ForwardJobHousekeeping(
      {} as ForwardJobsRepository,
      { schedule: () => Promise.resolve() } as unknown as ForwardQueue,
      { forwardJobSweepSeconds: 30 } as AppConfig,
      {} as CallbackDeliveries,
      lostJobs,
    );
    const warn = jest.spyOn(housekeeping['logger'], 'warn').mockImplementation(() => undefined);
    jest.spyOn(housekeeping['logger'], 'debug').mockImplementation(() => undefined);

    await housekeeping.start('start');
    await jest.advanceTimersByTimeAsync(3_000);
    const before = passes;
    expect(before).toBeGreaterThanOrEqual(3);

    housekeeping.onModuleDestroy();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(passes).toBe(before);
    expect(warn).not.toHaveBeenCalled();
  });
});
