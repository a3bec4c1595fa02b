import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * Due work (queued forwards' attempts, job-end callbacks' attempts, the housekeeping) is found by
 * BullMQ, never by a timer that polls PostgreSQL (issue 21, item 6). Every repeating timer in src/ is
 * listed here with why it is not such a poll; a new one fails this test until it is looked at.
 */
const SRC = resolve(__dirname, '../../src');

const TIMERS: Record<string, string> = {
  'modules/payments/checkout-sessions/checkout-session-purge.ts': 'deletes expired sessions (no work is due)',
  'modules/forwarding/records/forward-records.service.ts': 'replays the local spool file into the table',
  'platform/database/purges.ts':
    'the purges of expired idempotency keys and of record bodies past their retention (no work is due)',
  'app/health/worker-heartbeat.ts': 'writes the heartbeat file while the database answers',
  'modules/forwarding/jobs/forward-job.processor.ts': "renews the leases of this worker's running jobs",
  'modules/forwarding/ledger/ledger-sealer.ts':
    'seals the ledger entries written since the last head, and purges past retention (no work is due)',
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('no file polls PostgreSQL on a timer for due work (issue 21, item 6)', () => {
  const sources = files(SRC).map((path) => ({ file: relative(SRC, path), text: readFileSync(path, 'utf8') }));

  it('every repeating timer in src/ is a known one that finds no due work', () => {
    const repeating = sources.filter(({ text }) => /\bsetInterval\(/.test(text)).map(({ file }) => file);
    expect(repeating.sort()).toEqual(Object.keys(TIMERS).sort());
  });

  it('job-end callbacks use no timer: their attempts are BullMQ jobs of their own queue', () => {
    const callbacks = sources.filter(({ file }) => file.startsWith('modules/forwarding/callbacks/'));
    expect(callbacks.length).toBeGreaterThan(0);
    for (const { file, text } of callbacks)
      expect({ file, timer: /\bset(Interval|Timeout)\(/.test(text) }).toEqual({ file, timer: false });
    const deliveries = callbacks.find(({ file }) => file === 'modules/forwarding/callbacks/callback-jobs.ts');
    expect(deliveries?.text).toContain('CALLBACK_JOB_NAME');
  });
});
