import 'reflect-metadata';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { ApiKeyAlgorithm } from '../auth/api-key.entity';
import { ApiKeysService } from '../auth/api-keys.service';
import { ApiKeyResponse, ListApiKeysQuery } from '../auth/dto/api-key.dto';
import { signToken } from '../auth/token-signer';
import { KEY_CACHE_TTL_MS } from '../auth/token-verifier.service';
import { ProblemException } from '../common/problem/problem';
import { loadConfigOrExit } from '../bootstrap/load-config';
import { runMigrations } from '../database/migrate';
import { resolveDatabase } from '../database/resolve-database';
import { MERCHANT_ACCOUNT_ID_PATTERN, slugify } from '../merchant-accounts/merchant-account-id';
import { MerchantAccountsService } from '../merchant-accounts/merchant-accounts.service';
import { KeyRotationService } from '../vault/key-rotation.service';
import { CliModule } from './cli.module';

const USAGE = `Usage: npm run cli -- <command>
  migrate
  merchant create --name NAME [--id SLUG]
  api-key create (--merchant ID | --instance) --out FILE [--algorithm ES512|ES256]
  api-key list [--merchant ID]        every key, revoked ones included, newest first
  api-key revoke ID                   the key and its tokens stop working in every API process
  token --key FILE --key-id ID [--scopes a,b] [--ttl SECONDS]
  vault rotate-keys [--batch-size N]   re-wrap every data key under the first VAULT_MASTER_KEYS key
Each command prints one JSON object on stdout; logs and errors go to stderr.`;

class UsageError extends Error {}

function print(result: object): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Boots only what the command needs, against the same database `npm start` uses. */
async function withServices<T>(run: (app: INestApplicationContext, appliedMigrations: string[]) => Promise<T>): Promise<T> {
  const config = loadConfigOrExit();
  // stdout carries the command's JSON; anything the service logs goes to stderr.
  const quietConfig = { ...config, logLevel: config.logLevel === 'info' ? ('warn' as const) : config.logLevel };
  const database = await resolveDatabase(config, 'cli');
  const app = await NestFactory.createApplicationContext(
    CliModule.forRoot({ config: quietConfig, databaseUrl: database.url, logStream: process.stderr }),
    { logger: false },
  );
  try {
    // Idempotent and locked: the CLI works on a fresh database, and beside a running API.
    const applied = await runMigrations(app.get(DataSource));
    return await run(app, applied);
  } finally {
    await app.close();
    await database.embedded?.stop();
  }
}

type StringOrBoolean = { type: 'string' } | { type: 'boolean' };

/**
 * parseArgs, with `--opt value` read as `--opt=value` for string options: a key id is a base64url
 * thumbprint and may start with '-', which parseArgs would otherwise refuse as an ambiguous value.
 */
function parse<O extends Record<string, StringOrBoolean>>(args: string[], options: O) {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = args[i].startsWith('--') ? args[i].slice(2) : undefined;
    if (name !== undefined && options[name]?.type === 'string' && i + 1 < args.length) joined.push(`${args[i]}=${args[++i]}`);
    else joined.push(args[i]);
  }
  return parseArgs({ args: joined, options });
}

async function merchantCreate(args: string[]): Promise<void> {
  const { values } = parse(args, { name: { type: 'string' }, id: { type: 'string' } });
  if (!values.name) throw new UsageError('merchant create needs --name');
  const id = values.id ?? slugify(values.name);
  if (!MERCHANT_ACCOUNT_ID_PATTERN.test(id)) throw new UsageError(`--id must match ${MERCHANT_ACCOUNT_ID_PATTERN.source}`);
  const account = await withServices((app) => app.get(MerchantAccountsService).create(id, values.name!.slice(0, 200)));
  print({ id: account.id, display_name: account.displayName });
}

async function apiKeyCreate(args: string[]): Promise<void> {
  const { values } = parse(args, {
    merchant: { type: 'string' },
    instance: { type: 'boolean' },
    out: { type: 'string' },
    algorithm: { type: 'string' },
  });
  if (!values.out) throw new UsageError('api-key create needs --out FILE');
  if (Boolean(values.merchant) === Boolean(values.instance)) throw new UsageError('api-key create needs exactly one of --merchant ID or --instance');
  const algorithm = (values.algorithm ?? 'ES512').toUpperCase();
  if (algorithm !== 'ES512' && algorithm !== 'ES256') throw new UsageError('--algorithm must be ES512 or ES256');
  const out = resolve(values.out);
  if (existsSync(out)) throw new UsageError(`${values.out} exists; refusing to overwrite a private key`);
  const key = await withServices(async (app) => {
    if (values.merchant) await app.get(MerchantAccountsService).get(values.merchant);
    return app.get(ApiKeysService).create(values.merchant ?? null, algorithm as ApiKeyAlgorithm);
  });
  writeFileSync(out, key.privateKeyPem, { mode: 0o600, flag: 'wx' });
  print({ id: key.id, merchant_account_id: key.merchantAccountId, algorithm: key.algorithm, private_key_file: out });
}

async function apiKeyList(args: string[]): Promise<void> {
  const { values } = parse(args, { merchant: { type: 'string' } });
  if (values.merchant !== undefined && !MERCHANT_ACCOUNT_ID_PATTERN.test(values.merchant)) {
    throw new UsageError(`--merchant must match ${MERCHANT_ACCOUNT_ID_PATTERN.source}`);
  }
  const items = await withServices(async (app) => {
    const keys = app.get(ApiKeysService);
    const all: ApiKeyResponse[] = [];
    let cursor: string | undefined;
    do {
      const page = await keys.list({ kind: 'instance' }, { merchant_account_id: values.merchant, cursor, limit: ListApiKeysQuery.limits.max });
      all.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return all;
  });
  print({ items });
}

async function apiKeyRevoke(args: string[]): Promise<void> {
  // No options: the one argument is the id as given, even one starting with '-' ('--' before it is allowed too).
  const ids = args[0] === '--' ? args.slice(1) : args;
  if (ids.length !== 1) throw new UsageError('api-key revoke needs exactly one key ID');
  const { key, announced } = await withServices((app) => app.get(ApiKeysService).revoke({ kind: 'instance' }, ids[0]));
  if (!announced) {
    process.stderr.write(
      `Warning: the revocation could not be announced over Redis (REDIS_URL unset or unreachable); running API processes stop accepting the key within ${KEY_CACHE_TTL_MS / 1000} s.\n`,
    );
  }
  print(ApiKeyResponse.from(key));
}

async function token(args: string[]): Promise<void> {
  const { values } = parse(args, { key: { type: 'string' }, 'key-id': { type: 'string' }, scopes: { type: 'string' }, ttl: { type: 'string' } });
  if (!values.key || !values['key-id']) throw new UsageError('token needs --key FILE and --key-id ID');
  const ttl = values.ttl === undefined ? undefined : Number(values.ttl);
  if (ttl !== undefined && !Number.isInteger(ttl)) throw new UsageError('--ttl must be a whole number of seconds');
  const scopes = values.scopes?.split(',').map((s) => s.trim()).filter(Boolean);
  const jwt = await signToken({
    privateKeyPem: readFileSync(values.key, 'utf8'),
    keyId: values['key-id'],
    scopes,
    ttlSeconds: ttl,
  });
  print({ token: jwt });
}

async function migrate(): Promise<void> {
  const applied = await withServices(async (_app, appliedMigrations) => appliedMigrations);
  print({ applied });
}

async function rotateKeys(args: string[]): Promise<void> {
  const { values } = parse(args, { 'batch-size': { type: 'string' } });
  const batchSize = values['batch-size'] === undefined ? 500 : Number(values['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) throw new UsageError('--batch-size must be a whole number from 1 to 10000');
  const result = await withServices((app) => app.get(KeyRotationService).rotate(batchSize));
  print(result);
  // Rows could not be re-wrapped (named in the output) or were skipped: the old key must stay.
  if (result.remaining > 0) process.exitCode = 1;
}

async function main(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  if (command === 'migrate') return migrate();
  if (command === 'vault' && sub === 'rotate-keys') return rotateKeys(rest);
  if (command === 'merchant' && sub === 'create') return merchantCreate(rest);
  if (command === 'api-key' && sub === 'create') return apiKeyCreate(rest);
  if (command === 'api-key' && sub === 'list') return apiKeyList(rest);
  if (command === 'api-key' && sub === 'revoke') return apiKeyRevoke(rest);
  if (command === 'token') return token(argv.slice(1));
  throw new UsageError(command ? `unknown command "${argv.slice(0, 2).join(' ')}"` : 'no command given');
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
  const message = error instanceof ProblemException ? error.detail : error instanceof Error ? error.message : String(error);
  process.stderr.write(`Error: ${message}\n`);
  process.exit(1);
});
