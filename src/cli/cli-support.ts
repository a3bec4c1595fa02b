import { parseArgs } from 'node:util';
import type { INestApplicationContext } from '@nestjs/common';

/** What every CLI command shares: its errors, its output, its arguments, and the services it boots. */

export class UsageError extends Error {}
/** Printed as the API prints it: one line naming the variable. */
export class CliConfigError extends Error {}

export function print(result: object): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** The configuration as the API reads it; a bad value is a CliConfigError, one line naming the variable. */
export async function cliConfig(): Promise<import('../platform/config/config').AppConfig> {
  const { ConfigError, loadConfig } = await import('../platform/config/config');
  try {
    return loadConfig(process.env);
  } catch (error) {
    // Thrown, not process.exit: a command's cleanup (the key file api-key create opened) still runs.
    if (error instanceof ConfigError) throw new CliConfigError(`Configuration error: ${error.message}`);
    throw error;
  }
}

/** Boots only what the command needs, against the same database `npm start` uses. */
export async function withServices<T>(
  run: (app: INestApplicationContext, appliedMigrations: string[]) => Promise<T>,
  options: {
    /**
     * A command whose log is its audit trail (key rotation): the services' own log lines (Nest's Logger) reach
     * stderr, info lines included. Otherwise only what is logged through pino directly, warnings and worse.
     */
    logInfo?: boolean;
    /** Apply pending migrations first (every command but `migrate status`, which only reports them). */
    migrate?: boolean;
  } = {},
): Promise<T> {
  const { logInfo = false, migrate = true } = options;
  const [{ NestFactory }, { DataSource }, config, { runMigrations }, { resolveDatabase }, { CliModule }] =
    await Promise.all([
      import('@nestjs/core'),
      import('typeorm'),
      cliConfig(),
      import('../platform/database/migrate'),
      import('../platform/database/resolve-database'),
      import('./cli.module'),
    ]);
  const { AppLogger } = await import('../platform/logging/app-logger');
  // stdout carries the command's JSON; anything the service logs goes to stderr.
  const quietConfig = {
    ...config,
    logLevel: config.logLevel === 'info' && !logInfo ? ('warn' as const) : config.logLevel,
  };
  const database = await resolveDatabase(config, 'cli');
  const app = await NestFactory.createApplicationContext(
    CliModule.forRoot({ config: quietConfig, databaseUrl: database.url, logStream: process.stderr }),
    { logger: false },
  );
  if (logInfo) app.useLogger(app.get(AppLogger));
  try {
    // Idempotent and locked: the CLI works on a fresh database, and beside a running API.
    const applied = migrate ? await runMigrations(app.get(DataSource)) : [];
    return await run(app, applied);
  } finally {
    await app.close();
    await database.embedded?.stop();
  }
}

/** `migrate status`: the database's migrations against this build's, through the same database resolution. */
export async function readMigrationStatus() {
  const [{ DataSource }, { migrationStatus }] = await Promise.all([
    import('typeorm'),
    import('../platform/database/migrate'),
  ]);
  return withServices((app) => migrationStatus(app.get(DataSource)), { migrate: false });
}

type StringOrBoolean = { type: 'string'; multiple?: boolean } | { type: 'boolean' };

/**
 * parseArgs, with `--opt value` read as `--opt=value` for string options: a key id is a base64url
 * thumbprint and may start with '-', which parseArgs would otherwise refuse as an ambiguous value.
 */
export function parse<O extends Record<string, StringOrBoolean>>(args: string[], options: O) {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = args[i].startsWith('--') ? args[i].slice(2) : undefined;
    if (name !== undefined && options[name]?.type === 'string' && i + 1 < args.length)
      joined.push(`${args[i]}=${args[++i]}`);
    else joined.push(args[i]);
  }
  return parseArgs({ args: joined, options });
}

/**
 * A PKCS#11 token session for a command that makes a key in it (`vault key create`, `ledger key create`): the
 * token's settings only (no database; the label need not be configured yet), closed after `run`.
 */
export async function withToken<T>(
  run: (token: import('../modules/vault/pkcs11-keyring').Pkcs11Token, tokenLabel: string) => T,
): Promise<T> {
  const [{ ConfigError, vaultPkcs11 }, { Pkcs11Token }] = await Promise.all([
    import('../platform/config/config'),
    import('../modules/vault/pkcs11-keyring'),
  ]);
  let settings: ReturnType<typeof vaultPkcs11>;
  try {
    settings = vaultPkcs11(process.env, [], false);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliConfigError(`Configuration error: ${error.message}`);
    throw error;
  }
  const token = new Pkcs11Token({ ...settings, dataKeyCacheSize: 0 });
  try {
    return run(token, settings.tokenLabel);
  } finally {
    token.close();
  }
}
