import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { dump, load } from 'js-yaml';

/**
 * The alerts docs/metrics.md tells operators to set (its "Alerts" section, a Prometheus rule file in a ```yaml
 * block): Prometheus's own `promtool` checks them and runs two as unit tests (Debian's `prometheus` package,
 * which .ci/run installs), and every series they name is one the service exports, as the table lists it.
 */
const DOC = readFileSync(resolve(__dirname, '../../docs/metrics.md'), 'utf8');
const PROMTOOL = process.env.PROMTOOL_PATH ?? '/usr/bin/promtool';
const havePromtool = existsSync(PROMTOOL);
if (!havePromtool) console.warn(`skipping the promtool checks: no ${PROMTOOL} (apt-get install prometheus)`);
const withPromtool = havePromtool ? it : it.skip;

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The rule file: the ```yaml block of the "## Alerts" section. */
function alertsYaml(): string {
  const section = DOC.slice(DOC.indexOf('\n## Alerts\n'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('docs/metrics.md has no ```yaml block under "## Alerts"');
  return block[1];
}

const rules = (): Rule[] =>
  (load(alertsYaml()) as { groups: Array<{ name: string; rules: Rule[] }> }).groups.flatMap((group) => group.rules);

/** The table's series: each name of a row's first cell (`vault_forward_process_*` a prefix) with its Labels cell. */
function tableSeries(): Array<{ name: string; labels: string }> {
  return DOC.split('\n')
    .filter((line) => line.startsWith('| `vault_forward_'))
    .flatMap((line) => {
      const [names, , labels] = line.split(' | ');
      return [...names.matchAll(/`(vault_forward_[a-z_*]+)`/g)].map((name) => ({ name: name[1], labels }));
    });
}

/** The table's row of a series as an alert names it (a histogram's `_bucket`, `_count`, `_sum` are its own). */
function rowOf(series: string): { name: string; labels: string } | undefined {
  const base = series.replace(/_(bucket|count|sum)$/, '');
  return tableSeries().find(({ name }) =>
    name.endsWith('*') ? series.startsWith(name.slice(0, -1)) : name === series || name === base,
  );
}

/** Runs promtool with `args` in `dir`; its exit status and output. */
function promtool(dir: string, ...args: string[]): { status: number | null; output: string } {
  const result = spawnSync(PROMTOOL, args, { cwd: dir, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('the alerts of docs/metrics.md', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'vf-alerts-'));
    writeFileSync(join(dir, 'alerts.yml'), alertsYaml());
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are alerting rules, each with a severity and a summary', () => {
    const all = rules();
    expect(all.length).toBeGreaterThanOrEqual(10);
    for (const rule of all) {
      expect({ alert: rule.alert, severity: rule.labels?.severity }).toEqual({
        alert: expect.stringMatching(/^VaultForward[A-Za-z]+$/),
        severity: expect.stringMatching(/^(page|warning|info)$/),
      });
      expect(rule.annotations?.summary).toEqual(expect.any(String));
    }
  });

  it('name only series the service exports (in the table), selecting only on labels the table gives them', () => {
    const unknown: string[] = [];
    for (const rule of rules()) {
      const named = [...rule.expr.matchAll(/\b(vault_forward_[a-z0-9_]+)(\{[^}]*\})?/g)];
      // Each alert watches something of ours, or a target's `up` (Prometheus's own series).
      if (named.length === 0 && !/\bup\{/.test(rule.expr)) unknown.push(`${rule.alert}: names no series`);
      for (const [, series, selector] of named) {
        const row = rowOf(series);
        if (!row) {
          unknown.push(`${rule.alert}: ${series}`);
          continue;
        }
        for (const [, label] of (selector ?? '').matchAll(/([a-z_]+)\s*(?:=~|!~|!=|=)/g))
          if (!row.name.endsWith('*') && !row.labels.includes(`\`${label}\``))
            unknown.push(`${rule.alert}: ${series} has no label ${label}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  withPromtool('pass `promtool check rules`', () => {
    const checked = promtool(dir, 'check', 'rules', 'alerts.yml');
    expect(checked).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
  });

  withPromtool('fire as `promtool test rules` expects: a stuck queue, a spool that does not empty', () => {
    const byName = new Map(rules().map((rule) => [rule.alert, rule]));
    /** The alert as it fires with `labels`: its own labels added, its summary's `{{ $labels.x }}` filled in. */
    const firing = (name: string, labels: Record<string, string>) => {
      const rule = byName.get(name)!;
      const summary = rule.annotations!.summary.replace(
        /\{\{ \$labels\.(\w+) \}\}/g,
        (_, label: string) => labels[label],
      );
      return { exp_labels: { ...labels, ...rule.labels }, exp_annotations: { summary } };
    };
    const tests = {
      rule_files: ['alerts.yml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          // Both processes report the same rows: the waiting job ages a minute a minute; the callbacks' is empty.
          input_series: [
            {
              series: 'vault_forward_queue_oldest_age_seconds{queue="forward",state="waiting",instance="api"}',
              values: '0+60x20',
            },
            {
              series: 'vault_forward_queue_oldest_age_seconds{queue="forward",state="waiting",instance="worker"}',
              values: '0+60x20',
            },
            {
              series: 'vault_forward_queue_oldest_age_seconds{queue="callback",state="waiting",instance="api"}',
              values: '0x20',
            },
            { series: 'vault_forward_forward_record_spool_bytes{instance="api"}', values: '0 0 4096x18' },
            { series: 'vault_forward_forward_record_spool_bytes{instance="worker"}', values: '0x20' },
          ],
          alert_rule_test: [
            // Over 300 s from minute 6, firing after its 5 minutes.
            { eval_time: '10m', alertname: 'VaultForwardQueueStuck', exp_alerts: [] },
            {
              eval_time: '12m',
              alertname: 'VaultForwardQueueStuck',
              exp_alerts: [firing('VaultForwardQueueStuck', { queue: 'forward' })],
            },
            // Bytes in the spool from minute 2, firing after 5 minutes of it.
            { eval_time: '6m', alertname: 'VaultForwardRecordSpool', exp_alerts: [] },
            {
              eval_time: '8m',
              alertname: 'VaultForwardRecordSpool',
              exp_alerts: [firing('VaultForwardRecordSpool', { instance: 'api' })],
            },
          ],
        },
      ],
    };
    writeFileSync(join(dir, 'alerts.test.yml'), dump(tests, { lineWidth: -1 }));
    const tested = promtool(dir, 'test', 'rules', 'alerts.test.yml');
    expect(tested).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
  });
});
