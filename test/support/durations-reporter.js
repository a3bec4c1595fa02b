/**
 * A Jest reporter, registered next to the default one (jest.config.js): at the end of a run it prints how
 * long each test file took, slowest first, so a file that grows slow shows in every CI log instead of
 * only in a total that creeps up. Ten rows unless DURATIONS_TOP says otherwise.
 */
const { relative } = require('node:path');

class DurationsReporter {
  constructor(_globalConfig, options = {}) {
    this.top = Number(process.env.DURATIONS_TOP ?? options.top ?? 10);
    this.files = [];
  }

  onTestResult(_test, result) {
    const { start, end } = result.perfStats;
    this.files.push({ path: result.testFilePath, ms: end - start, failed: result.numFailingTests > 0 });
  }

  onRunComplete() {
    if (this.files.length === 0) return;
    const slowest = [...this.files].sort((a, b) => b.ms - a.ms).slice(0, this.top);
    const total = this.files.reduce((sum, file) => sum + file.ms, 0);
    const lines = slowest.map(
      ({ path, ms, failed }) =>
        `${(ms / 1000).toFixed(1).padStart(8)} s  ${relative(process.cwd(), path)}${failed ? '  (failed)' : ''}`,
    );
    process.stdout.write(
      `\nSlowest ${slowest.length} of ${this.files.length} test files (${(total / 1000).toFixed(1)} s in all):\n` +
        `${lines.join('\n')}\n`,
    );
  }
}

module.exports = DurationsReporter;
