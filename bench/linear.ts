/**
 * npm run bench:linear — that the scanners which read untrusted text cost linear CPU: each input is run at
 * a quarter and at the whole size, side by side, and the whole may cost at most MAX_RATIO times the quarter
 * (linear work costs 4 times as much, quadratic 16). Exits 1 when a case is over, after the table.
 * The unit tests run the large inputs once for correctness; CPU time is measured here, where a busy machine
 * makes a run noisy rather than a test red.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { withoutAuthenticationData } from '../src/platform/card-data/authentication-data';
import { findCardNumbers, maskCardNumbers } from '../src/platform/card-data/card-numbers';
import { prefersGr4vyError } from '../src/platform/problem/gr4vy-error';
import { applyRules } from '../src/modules/forwarding/answers/response-rules-engine';
import { parseTemplate } from '../src/modules/forwarding/sending/authentication-steps';
import { findPlaceholders } from '../src/modules/vault/placeholders/placeholder-grammar';
import { fillBytes, fillScan, scanText, secretUses } from '../src/modules/vault/placeholders/placeholders';
import { compileResponseRules } from '../src/modules/forwarding-setup/configs/response-rules';
import {
  authenticationDataText,
  cardNumberText,
  densePlaceholders,
  digitRuns,
  fillSubstituted,
  hmacExpressions,
  longAccept,
  MIB,
  openBraces,
  PLACEHOLDER_INPUTS,
  matchAll,
  ruleAnswer,
  scanUntilRefused,
} from '../test/support/hostile-inputs';

const MAX_RATIO = Number(process.env.BENCH_MAX_RATIO ?? 8);
/**
 * Under this much CPU for the whole input a case passes whatever its ratio (the scanner's 100 ms for a megabyte):
 * a quarter that takes a millisecond or two is mostly noise, and a quadratic cost is seconds here.
 */
const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 100);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

/**
 * A full garbage collection before each measurement: otherwise a major GC that falls inside the larger run
 * (its allocations cross a threshold the smaller's do not) is billed to the code under test.
 */
const collectGarbage: () => void = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

/** CPU milliseconds (not wall time: a busy machine's waits for a core are not this code's cost), the best of RUNS. */
function bestCpuMs(run: () => unknown): number {
  let best = Infinity;
  collectGarbage();
  for (let i = 0; i < RUNS; i++) {
    const started = process.cpuUsage();
    run();
    const spent = process.cpuUsage(started);
    best = Math.min(best, (spent.user + spent.system) / 1000);
  }
  return best;
}

interface Case {
  name: string;
  /** The input at size `n`, made before the clock starts. */
  make: (n: number) => unknown;
  run: (input: never) => unknown;
  size: number;
}

function cases(): Case[] {
  const all: Case[] = [];
  const add = <T>(name: string, size: number, make: (n: number) => T, run: (input: T) => unknown) =>
    all.push({ name, size, make, run });
  for (const [input, make] of PLACEHOLDER_INPUTS) {
    for (const style of ['raw', 'json'] as const) {
      add(`findPlaceholders, ${input} (${style})`, MIB, make, (text) => findPlaceholders(text, style));
      add(`scanText, ${input} (${style})`, MIB, make, (text) => scanUntilRefused(text, style));
      const prepared = (n: number) => {
        const text = make(n);
        const scan = matchAll(text, style);
        const values = new Map(scan.matches.map((m) => [m.key, Buffer.from('4111111111111111')]));
        return { text, bytes: Buffer.from(text, 'latin1'), scan, values };
      };
      add(`fillBytes, ${input} (${style})`, MIB, prepared, ({ bytes, scan, values }) => fillBytes(bytes, scan, values));
      // Match and fill, the values as the executor computes them (filledValue, each distinct one once).
      const encoding = style === 'json' ? 'json' : 'none';
      add(`filledValues and fillBytes, ${input} (${style})`, MIB, make, (text) =>
        fillSubstituted(matchAll(text, style), encoding),
      );
      add(`fillScan, ${input} (${style})`, MIB, prepared, ({ scan }) => fillScan(scan, (m) => m.key));
    }
  }
  const secrets = new Map([['k', Buffer.from('key')]]);
  for (const style of ['raw', 'json'] as const) {
    const scanned = (n: number) => ({ text: hmacExpressions(n), scan: scanText(hmacExpressions(n), 1, style) });
    add(`scanText, hmac_sha256 expressions (${style})`, MIB, hmacExpressions, (text) => scanUntilRefused(text, style));
    add(`secretUses, hmac_sha256 expressions (${style})`, MIB, scanned, ({ scan }) => secretUses(scan));
    add(`fill, hmac_sha256 expressions (${style})`, MIB, scanned, ({ scan }) => fillSubstituted(scan, 'none', secrets));
  }
  const dense = new Map([
    ['CARD_NUMBER_1', Buffer.from('4111111111111111')],
    ['CARDHOLDER_NAME_1', Buffer.from('x')],
  ]);
  add(
    'fillBytes, a body dense with placeholders',
    MIB,
    (n) => ({ bytes: Buffer.from(densePlaceholders(n), 'latin1'), scan: scanText(densePlaceholders(n), 1, 'raw') }),
    ({ bytes, scan }) => fillBytes(bytes, scan, dense),
  );
  add('findCardNumbers, card numbers and digit runs', 20_000, cardNumberText, (text) => findCardNumbers(text));
  // Large enough that the quarter's run is milliseconds, not a fraction of one that noise can triple.
  add('withoutAuthenticationData, unclosed fields', 80_000, authenticationDataText, (text) =>
    withoutAuthenticationData(text),
  );
  add(
    'maskCardNumbers, digits',
    MIB,
    (n) => digitRuns(n)[0],
    (text) => maskCardNumbers(text),
  );
  add(
    'maskCardNumbers, near-PANs',
    MIB,
    (n) => digitRuns(n)[1],
    (text) => maskCardNumbers(text),
  );
  const twenty = compileResponseRules([
    ...Array.from({ length: 19 }, (_, i) => ({ match: `$.items[*].missing${i}`, action: 'mask' as const })),
    { match: '$.items[*]', action: 'remove' as const },
  ]);
  // applyRules edits the answer it is given: each run builds its own (both sizes pay for the building alike).
  add(
    'applyRules, twenty rules',
    20_000,
    (n) => n,
    (n: number) => applyRules(ruleAnswer(n), twenty),
  );
  add('prefersGr4vyError, a long Accept', 10_000, longAccept, (accept) => prefersGr4vyError(accept));
  add('parseTemplate, unclosed braces', 200_000, openBraces, (template) => parseTemplate(template));
  return all;
}

function main(): void {
  const filter = process.argv[2];
  const rows: string[] = ['| case | quarter ms | whole ms | ratio |', '|---|---:|---:|---:|'];
  const over: string[] = [];
  for (const { name, make, run, size } of cases()) {
    if (filter && !name.includes(filter)) continue;
    const quarter = make(size / 4) as never;
    const whole = make(size) as never;
    // Up to four rounds side by side; the lowest ratio counts: noise inflates one side of a round, a
    // quadratic cost every round.
    let best = { quarterMs: 0, wholeMs: Infinity, ratio: Infinity };
    for (let round = 0; round < 4 && best.ratio > MAX_RATIO; round++) {
      const wholeMs = bestCpuMs(() => run(whole));
      const quarterMs = bestCpuMs(() => run(quarter));
      const ratio = wholeMs / Math.max(quarterMs, 1);
      if (ratio < best.ratio) best = { quarterMs, wholeMs, ratio };
    }
    rows.push(`| ${name} | ${best.quarterMs.toFixed(1)} | ${best.wholeMs.toFixed(1)} | ${best.ratio.toFixed(1)} |`);
    if (best.ratio > MAX_RATIO && best.wholeMs >= BUDGET_MS) over.push(name);
  }
  console.log(rows.join('\n'));
  if (over.length > 0) {
    console.error(`\nOver ${MAX_RATIO}x the quarter's CPU and over ${BUDGET_MS} ms (not linear):\n${over.join('\n')}`);
    process.exitCode = 1;
  }
}

main();
