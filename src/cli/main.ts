import './compile-cache';
import 'reflect-metadata';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { ProblemException } from '../platform/problem/problem';
import { MERCHANT_ACCOUNT_ID_PATTERN, slugify } from '../modules/merchants/accounts/merchant-account-id';
import { CliConfigError, parse, print, readMigrationStatus, UsageError, withServices, withToken } from './cli-support';
import { ledgerCommand, LEDGER_USAGE } from './ledger-commands';
import { INBOUND_ROUTE_USAGE, inboundRouteCommand } from './inbound-route-commands';

/*
 * Start-up time is the CLI's latency: Nest, TypeORM and the services load (about half a second) only
 * inside the commands that talk to the database, through the `await import()`s below. `--help`, usage
 * errors and `token` load none of it (docs/benchmarks-history.md, "CLI start-up").
 */

const USAGE = `Usage: npm run --silent cli -- <command>
  migrate                             apply pending migrations (what the API does at start-up)
  migrate status                      applied and pending migrations, changing nothing; exit 1 when one is pending
  merchant create --name NAME [--id SLUG] [--exist-ok] [--secure-fields-origin ORIGIN]...
                                      --exist-ok answers an account of that id that is already there
  merchant update --id SLUG [--name NAME] [--secure-fields-origin ORIGIN]... [--no-secure-fields-origins]
                                      the origins given replace the account's list (repeat the option for several);
                                      --no-secure-fields-origins empties it
  api-key create (--merchant ID | --instance) --out FILE|- [--algorithm ES512|ES256] [--exist-ok]
                                      --out - puts the private key in the JSON output (private_key) instead of a file;
                                      --exist-ok answers the active key FILE already holds instead of refusing
  api-key list [--merchant ID]        every key, revoked ones included, newest first
  api-key revoke ID                   the key and its tokens stop working in every API process
  token --key FILE|- [--key-id ID] [--scopes a,b] [--ttl SECONDS]
                                      --key - reads the PEM from stdin; the key id is worked out from the key
  vault rotate-keys [--batch-size N]   re-wrap every data key under the current master key (the first of
                                      VAULT_PKCS11_KEY_LABELS with VAULT_KEY_PROVIDER=pkcs11, else of VAULT_MASTER_KEYS)
  vault key create --label NAME       make a non-extractable AES-256 master key in the PKCS#11 token
                                      (VAULT_PKCS11_MODULE, VAULT_PKCS11_TOKEN_LABEL, VAULT_PKCS11_PIN_FILE or _PIN)
${LEDGER_USAGE}
${INBOUND_ROUTE_USAGE}
Each command prints one JSON object on stdout; logs, usage and errors go to stderr (exit 2 for usage, 1 otherwise).`;

async function merchantCreate(args: string[]): Promise<void> {
  const { values } = parse(args, {
    name: { type: 'string' },
    id: { type: 'string' },
    'exist-ok': { type: 'boolean' },
    'secure-fields-origin': { type: 'string', multiple: true },
  });
  if (!values.name) throw new UsageError('merchant create needs --name');
  const id = values.id ?? slugify(values.name);
  if (!MERCHANT_ACCOUNT_ID_PATTERN.test(id))
    throw new UsageError(`--id must match ${MERCHANT_ACCOUNT_ID_PATTERN.source}`);
  const origins = await secureFieldsOriginsOption(values['secure-fields-origin']);
  const [{ MerchantAccountsService }, { MerchantAccountErrors }] = await Promise.all([
    import('../modules/merchants/accounts/merchant-accounts.service'),
    import('../modules/merchants/accounts/merchant-accounts.errors'),
  ]);
  const account = await withServices(async (app) => {
    const accounts = app.get(MerchantAccountsService);
    try {
      return await accounts.create(id, values.name!.slice(0, 200), {}, origins ?? []);
    } catch (error) {
      // --exist-ok: a script run twice (the README's walkthrough) gets the account it made the first time.
      const taken = error instanceof ProblemException && error.definition === MerchantAccountErrors.duplicateId;
      if (taken && values['exist-ok']) return accounts.get(id);
      throw error;
    }
  });
  print({ id: account.id, display_name: account.displayName, secure_fields_origins: account.secureFieldsOrigins });
}

async function merchantUpdate(args: string[]): Promise<void> {
  const { values } = parse(args, {
    id: { type: 'string' },
    name: { type: 'string' },
    'secure-fields-origin': { type: 'string', multiple: true },
    'no-secure-fields-origins': { type: 'boolean' },
  });
  if (!values.id || !MERCHANT_ACCOUNT_ID_PATTERN.test(values.id))
    throw new UsageError(`merchant update needs --id matching ${MERCHANT_ACCOUNT_ID_PATTERN.source}`);
  if (values['no-secure-fields-origins'] && values['secure-fields-origin'])
    throw new UsageError('--no-secure-fields-origins and --secure-fields-origin exclude each other');
  const origins = values['no-secure-fields-origins']
    ? []
    : await secureFieldsOriginsOption(values['secure-fields-origin']);
  if (values.name === undefined && origins === undefined)
    throw new UsageError('merchant update needs --name, --secure-fields-origin or --no-secure-fields-origins');
  const { MerchantAccountsService } = await import('../modules/merchants/accounts/merchant-accounts.service');
  const account = await withServices((app) =>
    app.get(MerchantAccountsService).update(values.id!, {
      displayName: values.name?.slice(0, 200),
      secureFieldsOrigins: origins,
    }),
  );
  print({ id: account.id, display_name: account.displayName, secure_fields_origins: account.secureFieldsOrigins });
}

/** `--secure-fields-origin` values checked as the API checks them (usage error otherwise); undefined when none. */
async function secureFieldsOriginsOption(raw: string[] | undefined): Promise<string[] | undefined> {
  if (raw === undefined) return undefined;
  const { MAX_SECURE_FIELDS_ORIGINS, secureFieldsOriginsProblem } =
    await import('../modules/merchants/accounts/secure-fields-origins');
  if (raw.length > MAX_SECURE_FIELDS_ORIGINS)
    throw new UsageError(`--secure-fields-origin may be given at most ${MAX_SECURE_FIELDS_ORIGINS} times`);
  const problem = secureFieldsOriginsProblem(raw);
  if (problem)
    throw new UsageError(`--secure-fields-origin ${problem.replace(/^item (\d+)/, (_, i) => `"${raw[Number(i)]}"`)}`);
  return raw;
}

async function apiKeyCreate(args: string[]): Promise<void> {
  const { values } = parse(args, {
    merchant: { type: 'string' },
    instance: { type: 'boolean' },
    out: { type: 'string' },
    algorithm: { type: 'string' },
    'exist-ok': { type: 'boolean' },
  });
  if (!values.out) throw new UsageError('api-key create needs --out FILE (or --out - for the JSON output)');
  if (Boolean(values.merchant) === Boolean(values.instance))
    throw new UsageError('api-key create needs exactly one of --merchant ID or --instance');
  const algorithm = (values.algorithm ?? 'ES512').toUpperCase();
  if (algorithm !== 'ES512' && algorithm !== 'ES256') throw new UsageError('--algorithm must be ES512 or ES256');
  const out = values.out === '-' ? null : resolve(values.out);
  if (out !== null && values['exist-ok'] && existsSync(out)) {
    print(await existingKey(values.out, out, values.merchant ?? null));
    return;
  }
  // The file first, exclusively: a path that cannot be written fails before a key row exists.
  const file = out === null ? null : openKeyFile(values.out, out);
  const [{ MerchantAccountsService }, { ApiKeysService }] = await Promise.all([
    import('../modules/merchants/accounts/merchant-accounts.service'),
    import('../modules/merchants/auth/api-keys.service'),
  ]);
  let written = false;
  try {
    const key = await withServices(async (app) => {
      if (values.merchant) await app.get(MerchantAccountsService).get(values.merchant);
      const keys = app.get(ApiKeysService);
      const created = await keys.create(values.merchant ?? null, algorithm);
      if (file !== null) {
        try {
          writeSync(file, created.privateKeyPem);
          closeSync(file);
          written = true;
        } catch (error) {
          // Nobody holds the private key: the row would be a key no one can ever use.
          await keys.discard(created.id);
          throw new Error(`could not write ${values.out} (${(error as Error).message}); the key was not kept`, {
            cause: error,
          });
        }
      }
      return created;
    });
    const where = out === null ? { private_key: key.privateKeyPem } : { private_key_file: out };
    print({ id: key.id, merchant_account_id: key.merchantAccountId, algorithm: key.algorithm, ...where });
  } finally {
    if (file !== null && !written) {
      closeQuietly(file);
      rmSync(out!, { force: true });
    }
  }
}

/**
 * `api-key create --exist-ok` with FILE already there: the active key of that owner whose private half FILE
 * holds, as `create` would print it. Anything else in FILE is refused, never overwritten.
 */
async function existingKey(given: string, path: string, merchant: string | null): Promise<Record<string, unknown>> {
  const refuse = (why: string) => new Error(`${given} exists and ${why}; refusing to overwrite a private key`);
  const { apiKeyIdOfPrivateKey } = await import('../modules/merchants/auth/api-key-id');
  let id: string;
  try {
    id = await apiKeyIdOfPrivateKey(readFileSync(path, 'utf8'));
  } catch {
    throw refuse('holds no private key');
  }
  const { ApiKeysService } = await import('../modules/merchants/auth/api-keys.service');
  const key = await withServices((app) => app.get(ApiKeysService).findActive(id));
  if (!key || key.merchantAccountId !== merchant) {
    throw refuse(merchant === null ? 'is no active instance key' : `is no active key of merchant ${merchant}`);
  }
  return { id: key.id, merchant_account_id: key.merchantAccountId, algorithm: key.algorithm, private_key_file: path };
}

/** Opens FILE for the private key: created here (never overwritten), mode 0600. */
function openKeyFile(given: string, path: string): number {
  try {
    return openSync(path, 'wx', 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      throw new Error(`${given} exists; refusing to overwrite a private key (--exist-ok reuses the key it holds)`, {
        cause: error,
      });
    }
    throw new Error(`cannot create ${given} (${code ?? (error as Error).message}); no key was created`, {
      cause: error,
    });
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed after a failed write
  }
}

async function apiKeyList(args: string[]): Promise<void> {
  const { values } = parse(args, { merchant: { type: 'string' } });
  if (values.merchant !== undefined && !MERCHANT_ACCOUNT_ID_PATTERN.test(values.merchant)) {
    throw new UsageError(`--merchant must match ${MERCHANT_ACCOUNT_ID_PATTERN.source}`);
  }
  const [{ ApiKeysService }, { ApiKeyResponse }, { keysetPage }] = await Promise.all([
    import('../modules/merchants/auth/api-keys.service'),
    import('../modules/merchants/auth/dto/api-key.dto'),
    import('../platform/pagination/keyset'),
  ]);
  const items = await withServices(async (app) => {
    const keys = app.get(ApiKeysService);
    const all: import('../modules/merchants/auth/dto/api-key.dto').ApiKeyResponse[] = [];
    // Every key, in pages of the API's largest, by keyset position: no cursors to sign in a local walk.
    let keyset: import('../platform/pagination/keyset').KeysetRequest = { limit: 100, cursor: null };
    for (;;) {
      const page = keysetPage(
        await keys.list({ kind: 'instance' }, { merchant_account_id: values.merchant }, keyset),
        keyset,
      );
      all.push(...page.rows.map((key) => ApiKeyResponse.from(key)));
      if (!page.next) return all;
      keyset = { limit: keyset.limit, cursor: { direction: 'next', position: page.next } };
    }
  });
  print({ items });
}

async function apiKeyRevoke(args: string[]): Promise<void> {
  // No options: the one argument is the id as given, even one starting with '-' ('--' before it is allowed too).
  const ids = args[0] === '--' ? args.slice(1) : args;
  if (ids.length !== 1) throw new UsageError('api-key revoke needs exactly one key ID');
  const [{ ApiKeysService }, { ApiKeyResponse }, { KEY_CACHE_TTL_MS }] = await Promise.all([
    import('../modules/merchants/auth/api-keys.service'),
    import('../modules/merchants/auth/dto/api-key.dto'),
    import('../modules/merchants/auth/token-verifier.service'),
  ]);
  const { key, announced } = await withServices((app) => app.get(ApiKeysService).revoke({ kind: 'instance' }, ids[0]));
  if (!announced) {
    process.stderr.write(
      `Warning: the revocation could not be announced over Redis (REDIS_URL unset or unreachable); running API ` +
        `processes stop accepting the key within ${KEY_CACHE_TTL_MS / 1000} s.\n`,
    );
  }
  print(ApiKeyResponse.from(key));
}

async function token(args: string[]): Promise<void> {
  const { values } = parse(args, {
    key: { type: 'string' },
    'key-id': { type: 'string' },
    scopes: { type: 'string' },
    ttl: { type: 'string' },
  });
  if (!values.key) throw new UsageError('token needs --key FILE (or --key - to read the PEM from stdin)');
  const ttl = values.ttl === undefined ? undefined : Number(values.ttl);
  if (ttl !== undefined && !Number.isInteger(ttl)) throw new UsageError('--ttl must be a whole number of seconds');
  const scopes = values.scopes
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const [{ signToken }, { apiKeyIdOfPrivateKey }] = await Promise.all([
    import('../modules/merchants/auth/token-signer'),
    import('../modules/merchants/auth/api-key-id'),
  ]);
  const privateKeyPem = readFileSync(values.key === '-' ? 0 : values.key, 'utf8');
  let keyId = values['key-id'];
  if (keyId === undefined) {
    try {
      keyId = await apiKeyIdOfPrivateKey(privateKeyPem);
    } catch {
      throw new Error(`${values.key === '-' ? 'stdin' : values.key} is not a PEM private key`);
    }
  }
  print({ token: await signToken({ privateKeyPem, keyId, scopes, ttlSeconds: ttl }) });
}

async function migrate(): Promise<void> {
  const applied = await withServices((_app, appliedMigrations) => Promise.resolve(appliedMigrations));
  print({ applied });
}

/** What is applied and what is pending, changing nothing; exit 1 when a migration is pending (for a deploy's check). */
async function migrateStatus(): Promise<void> {
  const status = await readMigrationStatus();
  print(status);
  if (status.pending.length > 0) process.exitCode = 1;
}

async function rotateKeys(args: string[]): Promise<void> {
  const { values } = parse(args, { 'batch-size': { type: 'string' } });
  const batchSize = values['batch-size'] === undefined ? 500 : Number(values['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000)
    throw new UsageError('--batch-size must be a whole number from 1 to 10000');
  const { KeyRotationService } = await import('../modules/vault/key-rotation.service');
  const { VAULT_KEYRING } = await import('../modules/vault/keyring');
  // Its info lines (each batch, the summary, each unwrap by an HSM) are the rotation's audit trail, on stderr.
  const { result, keyIds } = await withServices(
    async (app) => ({
      result: await app.get(KeyRotationService).rotate(batchSize),
      keyIds: app.get<import('../modules/vault/keyring').VaultKeyring>(VAULT_KEYRING).keys.map((k) => k.id),
    }),
    { logInfo: true },
  );
  print(result);
  // Rows could not be re-wrapped (named in the output) or were skipped: the old key must stay.
  if (result.remaining > 0) {
    process.exitCode = 1;
    process.stderr.write(`${result.remaining} rows are still under other master keys: keep every configured key.\n`);
  } else if (keyIds.length > 1) {
    const old = keyIds.filter((id) => id !== result.master_key_id).join(', ');
    process.stderr.write(
      `Every row is under master key "${result.master_key_id}": ${old} may now be removed ` +
        '(from VAULT_MASTER_KEYS or VAULT_PKCS11_KEY_LABELS, then from the token).\n',
    );
  }
}

async function vaultKeyCreate(args: string[]): Promise<void> {
  const { values } = parse(args, { label: { type: 'string' } });
  if (!values.label) throw new UsageError('vault key create needs --label NAME');
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(values.label))
    throw new UsageError('--label must be 1–64 letters, digits, . _ or -');
  const tokenLabel = await withToken((token, label) => {
    token.createKey(values.label!);
    return label;
  });
  print({
    label: values.label,
    token_label: tokenLabel,
    key_type: 'AES-256',
    extractable: false,
    sensitive: true,
  });
}

async function main(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  // Asked for, usage is the output; every other time it goes to stderr with the error.
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === 'migrate' && sub === 'status' && rest.length === 0) return migrateStatus();
  if (command === 'migrate' && sub === undefined) return migrate();
  if (command === 'vault' && sub === 'rotate-keys') return rotateKeys(rest);
  if (command === 'vault' && sub === 'key' && rest[0] === 'create') return vaultKeyCreate(rest.slice(1));
  if (command === 'merchant' && sub === 'create') return merchantCreate(rest);
  if (command === 'merchant' && sub === 'update') return merchantUpdate(rest);
  if (command === 'api-key' && sub === 'create') return apiKeyCreate(rest);
  if (command === 'api-key' && sub === 'list') return apiKeyList(rest);
  if (command === 'api-key' && sub === 'revoke') return apiKeyRevoke(rest);
  if (command === 'token') return token(argv.slice(1));
  if (command === 'ledger') return ledgerCommand(sub, rest);
  if (command === 'inbound-route') return inboundRouteCommand(sub, rest);
  throw new UsageError(command ? `unknown command "${argv.slice(0, 2).join(' ')}"` : 'no command given');
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (error instanceof CliConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  const message =
    error instanceof ProblemException ? error.detail : error instanceof Error ? error.message : String(error);
  process.stderr.write(`Error: ${message}\n`);
  process.exit(1);
});
