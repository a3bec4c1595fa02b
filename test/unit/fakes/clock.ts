import { performance } from 'node:perf_hooks';

/**
 * A clock that moves only when the test says so. The services read the time through the production Clock
 * (SYSTEM_CLOCK, on Date.now()) and, in the jobs, node:perf_hooks' performance.now() (an epoch in ms is
 * timeOrigin + now()); both are set from one value here, so what a service computes from "now" (a backoff's
 * due time, a lease's age) is exact.
 * Jest's fake timers do not reach node:perf_hooks, hence spies. No timer is faked: nothing waits.
 */
export class FakeClock {
  private nowMs: number;
  private readonly spies: jest.SpyInstance[];

  constructor(start = '2030-01-01T00:00:00.000Z') {
    this.nowMs = Date.parse(start);
    this.spies = [
      jest.spyOn(Date, 'now').mockImplementation(() => this.nowMs),
      jest.spyOn(performance, 'now').mockImplementation(() => this.nowMs - performance.timeOrigin),
    ];
  }

  /** Epoch milliseconds. */
  now(): number {
    return this.nowMs;
  }

  advance(ms: number): void {
    this.nowMs += ms;
  }

  restore(): void {
    for (const spy of this.spies) spy.mockRestore();
  }
}
