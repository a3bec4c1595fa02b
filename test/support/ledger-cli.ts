import { execFile } from 'node:child_process';
import { TEST_LEDGER_KEY } from './ledger-key';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The compiled CLI (`dist/cli/main.js`) as an operator runs it on a test's database, with the test ledger key and
 * nothing else of the test's environment; its exit code and output, whatever they are.
 */
export function ledgerCli(databaseUrl: string, dataDir: string): (...args: string[]) => Promise<CliResult> {
  return (...args) =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        ['dist/cli/main.js', ...args],
        {
          env: {
            PATH: process.env.PATH,
            DATA_DIR: dataDir,
            DATABASE_URL: databaseUrl,
            LEDGER_SIGNING_KEY: TEST_LEDGER_KEY,
          },
          timeout: 60_000,
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
}
