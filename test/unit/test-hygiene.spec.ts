import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * The server tests (test/e2e, test/faults and their helpers in test/support) assert on what can be counted
 * or ordered, never on elapsed time, and wait on events or poll with a deadline (test/support/wait.ts),
 * never for a fixed time: on a shared two-core machine a duration is noise, and a sleep is either too short
 * (a flaky test) or too long (a slow one). Timings belong in bench/. Each exception below says why it is one.
 */
const ROOT = resolve(__dirname, '../..');
const SCANNED = ['test/e2e', 'test/faults', 'test/support'];

const RULES: Array<{ rule: string; pattern: RegExp }> = [
  { rule: 'a wall-clock or CPU measurement', pattern: /performance\.now\(|process\.hrtime|process\.cpuUsage\(/ },
  // Two readings of the clock set against each other: an elapsed time.
  { rule: 'an elapsed time', pattern: /Date\.now\(\)\s*-\s*[A-Za-z_$(]|[\w$)\]]\s*-\s*Date\.now\(\)/ },
  // A loop against the clock: waitFor does this once, with a message that says what never came.
  { rule: 'a hand-written deadline', pattern: /Date\.now\(\)\s*[<>]=?\s*[A-Za-z_$]/ },
  // A timer that resolves (a timer that rejects is a deadline), node:timers/promises, or a sleep()/delay() helper.
  {
    rule: 'a fixed sleep',
    pattern: new RegExp(
      [
        String.raw`setTimeout\(\s*(resolve|res|r|done|next)\s*[,)]`,
        String.raw`setTimeout\(\s*\(\)\s*=>\s*(resolve|res|r)\(`,
        String.raw`timers\/promises`,
        String.raw`(?<![\w.])(sleep|delay)\(`,
      ].join('|'),
    ),
  },
];

/**
 * The exceptions, by file, rule and the code they allow (a part of its line), each with its reason: a fault's
 * length is modelled in time (that is the fault), and the one poll helper owns its deadline.
 */
const ALLOWED: Array<{ file: string; rule: string; code: string; reason: string }> = [
  {
    file: 'test/support/wait.ts',
    rule: 'a hand-written deadline',
    code: 'if (Date.now() >= deadline)',
    reason: 'the deadline of waitFor itself',
  },
  {
    file: 'test/support/wait.ts',
    rule: 'a fixed sleep',
    code: 'setTimeout(resolve, intervalMs)',
    reason: 'the interval between two polls of waitFor',
  },
  {
    file: 'test/faults/once-means-once.fault-spec.ts',
    rule: 'a fixed sleep',
    code: 'setTimeout(resolve, OUTAGE_MS)',
    reason: 'the length of the outage the fault models, not a wait for a result',
  },
  {
    file: 'test/faults/fault-queue-postgres-outage.fault-spec.ts',
    rule: 'an elapsed time',
    code: 'Date.now() - downAt >= ms',
    reason: 'the length of the PostgreSQL outage the fault models',
  },
  {
    file: 'test/faults/fault-postgres.fault-spec.ts',
    rule: 'an elapsed time',
    code: 'Date.now() - downSince > 3_000',
    reason: 'PostgreSQL stays down at least 3 s: the length of the fault',
  },
  {
    file: 'test/e2e/vault-pkcs11.e2e-spec.ts',
    rule: 'a fixed sleep',
    code: 'setTimeout(resolve, 1_100)',
    reason:
      'the data-key cache entries expire by lru-cache’s own clock (performance.now), which no injected clock ' +
      'reaches short of faking every timer of the app: a wait just past the smallest TTL, 1 s',
  },
  {
    file: 'test/e2e/dashboard.e2e-spec.ts',
    rule: 'an elapsed time',
    code: 'Math.abs(Number(timestamp) - Date.now() / 1000) < 60',
    reason: 'the signature’s timestamp is the current time (a minute of slack), not a duration',
  },
  {
    file: 'test/e2e/forward-authentication-methods.e2e-spec.ts',
    rule: 'an elapsed time',
    code: 'Math.abs(Number(timestamp) - Date.now() / 1000)',
    reason: 'the signed timestamp is the current time (a minute of slack), not a duration',
  },
];

interface Finding {
  file: string;
  line: number;
  rule: string;
  text: string;
}

/** What the rules find in one source, comment lines left out (they may name what they forbid). */
function findings(file: string, source: string): Finding[] {
  const found: Finding[] = [];
  source.split('\n').forEach((text, index) => {
    const code = text.trim();
    if (code.startsWith('//') || code.startsWith('*') || code.startsWith('/*')) return;
    for (const { rule, pattern } of RULES)
      if (pattern.test(code)) found.push({ file, line: index + 1, rule, text: code });
  });
  return found;
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('server tests neither time nor sleep', () => {
  const all = SCANNED.flatMap((dir) => files(join(ROOT, dir))).flatMap((path) =>
    findings(relative(ROOT, path), readFileSync(path, 'utf8')),
  );
  const allowed = (f: Finding) =>
    ALLOWED.some((a) => a.file === f.file && a.rule === f.rule && f.text.includes(a.code));

  it('no test measures elapsed time or sleeps a fixed time, outside the listed exceptions', () => {
    expect(all.filter((f) => !allowed(f)).map((f) => `${f.file}:${f.line} ${f.rule}: ${f.text}`)).toEqual([]);
  });

  it('every exception is still needed (a fixed one leaves the list)', () => {
    const unused = ALLOWED.filter(
      (a) => !all.some((f) => f.file === a.file && f.rule === a.rule && f.text.includes(a.code)),
    );
    expect(unused).toEqual([]);
  });

  it('recognises each kind it forbids, and not a deadline timer or a delay the downstream models', () => {
    const rules = (source: string) => findings('x.ts', source).map((f) => f.rule);
    expect(rules('const started = performance.now();')).toEqual(['a wall-clock or CPU measurement']);
    expect(rules('const spent = process.cpuUsage(before);')).toEqual(['a wall-clock or CPU measurement']);
    expect(rules('expect(Date.now() - started).toBeLessThan(3_000);')).toEqual(['an elapsed time']);
    expect(rules('const left = expiresAt.getTime() - Date.now();')).toEqual(['an elapsed time']);
    expect(rules('while (seen < 3 && Date.now() < deadline) poll();')).toEqual(['a hand-written deadline']);
    expect(rules('await new Promise((resolve) => setTimeout(resolve, 300));')).toEqual(['a fixed sleep']);
    expect(rules("new Promise((r) => setTimeout(() => r('still running'), 1_000))")).toEqual(['a fixed sleep']);
    expect(rules("import { setTimeout } from 'node:timers/promises';")).toEqual(['a fixed sleep']);
    expect(rules('await sleep(100);')).toEqual(['a fixed sleep']);
    expect(rules('// await sleep(100) is what this replaced')).toEqual([]);
    expect(rules('const old = new Date(Date.now() - 31_000);')).toEqual([]);
    expect(rules("const timer = setTimeout(() => reject(new Error('no answer')), limitMs);")).toEqual([]);
    expect(rules("const timer = setTimeout(() => res.end('late'), 3_000);")).toEqual([]);
    expect(rules("sql.prepared('x', 'SELECT pg_sleep(0.02)', [])")).toEqual([]);
  });
});
