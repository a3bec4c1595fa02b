import { createHash, randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import * as pkcs11js from 'pkcs11js';
import type { AppConfig, VaultPkcs11Config } from '../../platform/config/config';
import { IV_BYTES, TAG_BYTES } from './crypto/aes-gcm';
import { KeyStore, MasterKey, VaultKeyring } from './keyring';
import { VaultKeyUnavailableError } from './vault.errors';

/**
 * Master keys that live in a PKCS#11 token (an HSM; SoftHSM2 in the tests). Each is a sensitive,
 * non-extractable AES-256 key found by its label; data keys are wrapped and unwrapped inside the token
 * with CKM_AES_GCM, so the master key never enters this process. Unwrapped data keys are kept in a
 * bounded cache (VAULT_DATA_KEY_CACHE_SIZE / _TTL) so a forward does not cost an HSM round trip.
 *
 * pkcs11js calls are synchronous: one session per process serves every call in turn (the event loop
 * serialises them), which is why there is no session pool (docs/decisions/0087).
 *
 * Wrapped blob layout: version (1 byte, = 2) | IV (12) | ciphertext | GCM tag (16), the token's own
 * output order; version 1 blobs are `env` keys' (aes-gcm.ts).
 */
const PKCS11_VERSION = 2;

/** Records every call into the token and every unwrap, for /metrics and the audit log. */
interface KeyUseObserver {
  tokenCall(operation: 'wrap' | 'unwrap' | 'sign' | 'connect', seconds: number, ok: boolean): void;
  /** An unwrap answered from the cache (true) or by the token (false). */
  unwrapLookup(cached: boolean): void;
  /** An unwrap that missed the cache, once the token has answered (or not): the key-use audit's entry. */
  unwrapped(use: KeyUse): void;
}

/**
 * One use of a master key in the token, without key material: the key's label, what the data key is
 * bound to (its AAD: purpose and owner ids, e.g. a card's merchant and id), how long the token took,
 * and whether it unwrapped (`ok`), refused the blob (`refused`: it does not authenticate) or did not
 * answer (`unavailable`).
 */
interface KeyUse {
  keyLabel: string;
  aad: string;
  seconds: number;
  outcome: 'ok' | 'refused' | 'unavailable';
}

const NO_OBSERVER: KeyUseObserver = {
  tokenCall: () => undefined,
  unwrapLookup: () => undefined,
  unwrapped: () => undefined,
};

/**
 * C_Decrypt's answers that mean "this blob does not authenticate" rather than "the token is away".
 * SoftHSM2 reports a GCM tag mismatch as CKR_GENERAL_ERROR; C_DecryptInit has succeeded by then, so
 * the key and the session were fine.
 */
const BAD_DATA = new Set(['CKR_ENCRYPTED_DATA_INVALID', 'CKR_ENCRYPTED_DATA_LEN_RANGE', 'CKR_GENERAL_ERROR']);

class BadData extends Error {}

/** One loaded library per path and process: C_Initialize may run only once. */
const modules = new Map<string, { library: pkcs11js.PKCS11; reinitializedAt: number }>();

export function loadModule(path: string): pkcs11js.PKCS11 {
  let loaded = modules.get(path);
  if (!loaded) {
    const library = new pkcs11js.PKCS11();
    library.load(path);
    initialize(library);
    loaded = { library, reinitializedAt: 0 };
    modules.set(path, loaded);
  }
  return loaded.library;
}

function initialize(library: pkcs11js.PKCS11): void {
  try {
    library.C_Initialize();
  } catch (error) {
    if (codeOf(error) !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') throw error;
  }
}

/** A library is re-initialised at most this often; in between, a token that is away fails fast. */
const REINITIALIZE_INTERVAL_MS = 1000;

/**
 * C_Finalize and C_Initialize again: some libraries (SoftHSM2 among them; network HSM clients after a
 * failover) keep a slot broken until then, even once the token is back. Every session of the
 * process ends, so other Pkcs11Tokens on this library re-open theirs on their next call.
 */
function reinitialize(path: string, now: boolean): boolean {
  const loaded = modules.get(path);
  if (!loaded || (!now && performance.now() - loaded.reinitializedAt < REINITIALIZE_INTERVAL_MS)) return false;
  loaded.reinitializedAt = performance.now();
  try {
    loaded.library.C_Finalize();
  } catch {
    // Not initialised any more, or the library is as broken as the token: initialise anyway.
  }
  initialize(loaded.library);
  return true;
}

function codeOf(error: unknown): string {
  return /(CKR_[A-Z_]+)/.exec((error as Error)?.message ?? '')?.[1] ?? 'error';
}

/** A logged-in session on the token named by VAULT_PKCS11_TOKEN_LABEL, re-opened after a failure. */
export class Pkcs11Token implements KeyStore {
  private readonly logger = new Logger('VaultHsm');
  /** The logged-in session open() made (null when closed); read by the signing key to make a key pair. */
  session: Buffer | null = null;
  private readonly handles = new Map<string, Buffer>();
  readonly cache: LRUCache<string, Buffer> | null;

  constructor(
    readonly config: VaultPkcs11Config,
    private readonly observer: KeyUseObserver = NO_OBSERVER,
  ) {
    const { dataKeyCacheSize: max, dataKeyCacheTtlMs: ttl } = config;
    this.cache = max > 0 && ttl > 0 ? new LRUCache<string, Buffer>({ max, ttl, dispose: (key) => key.fill(0) }) : null;
  }

  /** Opens the session now: a wrong module, token, PIN or key label stops the start-up, not the first card. */
  connect(labels: readonly string[]): void {
    const connect = () => {
      this.open();
      for (const label of labels) this.handle(label);
    };
    try {
      this.timed('connect', connect);
    } catch {
      // A library left broken by an earlier outage in this process (reinitialize) gets one fresh start.
      if (!this.reinitialize(true)) throw new Error('unreachable');
      this.timed('connect', connect);
    }
  }

  /**
   * Runs `op` with the session and the key's handle; a failure of the token (not of the data) drops
   * the session and tries once more with a new one, then answers VaultKeyUnavailableError.
   */
  run<T>(
    label: string,
    operation: 'wrap' | 'unwrap' | 'sign',
    op: (m: pkcs11js.PKCS11, s: Buffer, key: Buffer) => T,
    objectClass = pkcs11js.CKO_SECRET_KEY,
  ): T {
    let lastError: unknown;
    // A new session first; then, when that fails too, the library re-initialised (reinitialize).
    for (let attempt = 0; attempt < 3; attempt++) {
      if (attempt === 2 && !this.reinitialize()) break;
      const started = performance.now();
      try {
        const module = this.open();
        const result = op(module, this.session!, this.handle(label, objectClass));
        this.observer.tokenCall(operation, (performance.now() - started) / 1000, true);
        return result;
      } catch (error) {
        if (error instanceof BadData) {
          this.observer.tokenCall(operation, (performance.now() - started) / 1000, true);
          throw error;
        }
        this.observer.tokenCall(operation, (performance.now() - started) / 1000, false);
        lastError = error;
        this.reset();
      }
    }
    const reason =
      lastError instanceof Error && !/CKR_/.test(lastError.message) ? lastError.message : codeOf(lastError);
    this.logger.error(`key "${label}": the token does not answer (${reason})`);
    throw new VaultKeyUnavailableError(label, reason);
  }

  private reinitialize(now = false): boolean {
    try {
      return reinitialize(this.config.module, now);
    } catch (error) {
      this.logger.error(`re-initialising the PKCS#11 library failed (${codeOf(error)})`);
      return false;
    }
  }

  close(): void {
    this.reset();
    this.cache?.clear();
  }

  /** The library, with an open, logged-in session. */
  open(readWrite = false): pkcs11js.PKCS11 {
    const module = loadModule(this.config.module);
    if (this.session) return module;
    const slot = module
      .C_GetSlotList(true)
      .find((s) => module.C_GetTokenInfo(s).label.trim() === this.config.tokenLabel);
    if (!slot) throw new Error(`no token labelled "${this.config.tokenLabel}" (VAULT_PKCS11_TOKEN_LABEL)`);
    const flags = pkcs11js.CKF_SERIAL_SESSION | (readWrite ? pkcs11js.CKF_RW_SESSION : 0);
    const session = module.C_OpenSession(slot, flags);
    try {
      module.C_Login(session, pkcs11js.CKU_USER, this.config.pin);
    } catch (error) {
      if (codeOf(error) !== 'CKR_USER_ALREADY_LOGGED_IN') {
        module.C_CloseSession(session);
        throw new Error(`login to token "${this.config.tokenLabel}" failed (${codeOf(error)})`, { cause: error });
      }
    }
    this.session = session;
    return module;
  }

  /** The handle of the key (secret by default) labelled `label`; exactly one must exist. */
  handle(label: string, objectClass = pkcs11js.CKO_SECRET_KEY): Buffer {
    const known = this.handles.get(`${objectClass}:${label}`);
    if (known) return known;
    const found = this.find(label, objectClass);
    const kind = objectClass === pkcs11js.CKO_SECRET_KEY ? 'secret' : 'private';
    if (found.length !== 1)
      throw new Error(
        `token "${this.config.tokenLabel}" holds ${found.length} ${kind} keys labelled "${label}" (need exactly one)`,
      );
    this.handles.set(`${objectClass}:${label}`, found[0]);
    return found[0];
  }

  find(label: string, objectClass = pkcs11js.CKO_SECRET_KEY): Buffer[] {
    const module = this.open();
    module.C_FindObjectsInit(this.session!, [
      { type: pkcs11js.CKA_CLASS, value: objectClass },
      { type: pkcs11js.CKA_LABEL, value: label },
    ]);
    try {
      return module.C_FindObjects(this.session!, 2);
    } finally {
      module.C_FindObjectsFinal(this.session!);
    }
  }

  /** Makes a sensitive, non-extractable AES-256 key for wrapping (the CLI's `vault key create`). */
  createKey(label: string): void {
    this.reset();
    const module = this.open(true);
    try {
      if (this.find(label).length > 0)
        throw new Error(`token "${this.config.tokenLabel}" already holds a key labelled "${label}"`);
      module.C_GenerateKey(this.session!, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
        { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
        { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
        { type: pkcs11js.CKA_LABEL, value: label },
        { type: pkcs11js.CKA_TOKEN, value: true },
        { type: pkcs11js.CKA_PRIVATE, value: true },
        { type: pkcs11js.CKA_SENSITIVE, value: true },
        { type: pkcs11js.CKA_EXTRACTABLE, value: false },
        { type: pkcs11js.CKA_ENCRYPT, value: true },
        { type: pkcs11js.CKA_DECRYPT, value: true },
        { type: pkcs11js.CKA_WRAP, value: false },
        { type: pkcs11js.CKA_UNWRAP, value: false },
      ]);
    } finally {
      this.reset();
    }
  }

  private reset(): void {
    this.handles.clear();
    const session = this.session;
    this.session = null;
    if (!session) return;
    try {
      loadModule(this.config.module).C_CloseSession(session);
    } catch {
      // The session is gone with the token; nothing to release.
    }
  }

  private timed(operation: 'connect', fn: () => void): void {
    const started = performance.now();
    try {
      fn();
      this.observer.tokenCall(operation, (performance.now() - started) / 1000, true);
    } catch (error) {
      this.observer.tokenCall(operation, (performance.now() - started) / 1000, false);
      this.reset();
      throw error;
    }
  }
}

function gcm(iv: Buffer, aad: string): pkcs11js.Mechanism {
  const parameter: pkcs11js.AesGCM = {
    type: pkcs11js.CK_PARAMS_AES_GCM,
    iv,
    aad: Buffer.from(aad, 'utf8'),
    ivBits: IV_BYTES * 8,
    tagBits: TAG_BYTES * 8,
  };
  return { mechanism: pkcs11js.CKM_AES_GCM, parameter };
}

class Pkcs11MasterKey implements MasterKey {
  constructor(
    readonly id: string,
    private readonly token: Pkcs11Token,
    private readonly observer: KeyUseObserver = NO_OBSERVER,
  ) {}

  wrap(plaintext: Buffer, aad: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const body = this.token.run(this.id, 'wrap', (m, session, key) => {
      m.C_EncryptInit(session, gcm(iv, aad), key);
      return m.C_Encrypt(session, plaintext, Buffer.alloc(plaintext.length + TAG_BYTES));
    });
    return Buffer.concat([Buffer.from([PKCS11_VERSION]), iv, body]);
  }

  unwrap(blob: Buffer, aad: string): Buffer | null {
    if (blob.length < 1 + IV_BYTES + TAG_BYTES || blob[0] !== PKCS11_VERSION) return null;
    const cache = this.token.cache;
    // The AAD and key id are part of the entry: a blob moved onto another row misses and fails in the token.
    const entry = cache && createHash('sha256').update(`${this.id}\n${aad}\n`).update(blob).digest('base64');
    const cached = entry ? cache.get(entry) : undefined;
    this.observer.unwrapLookup(cached !== undefined);
    if (cached) return Buffer.from(cached);
    const started = performance.now();
    const audit = (outcome: KeyUse['outcome']) =>
      this.observer.unwrapped({ keyLabel: this.id, aad, seconds: (performance.now() - started) / 1000, outcome });
    let plaintext: Buffer;
    try {
      plaintext = this.token.run(this.id, 'unwrap', (m, session, key) => {
        m.C_DecryptInit(session, gcm(blob.subarray(1, 1 + IV_BYTES), aad), key);
        try {
          return m.C_Decrypt(session, blob.subarray(1 + IV_BYTES), Buffer.alloc(blob.length));
        } catch (error) {
          if (BAD_DATA.has(codeOf(error))) throw new BadData();
          throw error;
        }
      });
    } catch (error) {
      audit(error instanceof BadData ? 'refused' : 'unavailable');
      if (error instanceof BadData) return null;
      throw error;
    }
    audit('ok');
    if (entry) cache.set(entry, Buffer.from(plaintext));
    return plaintext;
  }
}

/**
 * The token's keys (VAULT_PKCS11_KEY_LABELS, the first current), then any VAULT_MASTER_KEYS, which
 * only unwrap: that is how a rotation from `env` to `pkcs11` runs (docs/vault.md, "Key rotation").
 */
export function pkcs11KeyringFromConfig(config: AppConfig, observer: KeyUseObserver = NO_OBSERVER): VaultKeyring {
  const settings = config.vaultPkcs11!;
  const token = new Pkcs11Token(settings, observer);
  token.connect(settings.keyLabels);
  new Logger('Vault').log(
    `master keys in PKCS#11 token "${settings.tokenLabel}": ${settings.keyLabels.join(', ')} (current: ${settings.keyLabels[0]})` +
      (config.vaultMasterKeys.length > 0
        ? `; VAULT_MASTER_KEYS ${config.vaultMasterKeys.map((k) => k.id).join(', ')} only unwrap, until rotated`
        : ''),
  );
  return new VaultKeyring(
    [...settings.keyLabels.map((label) => new Pkcs11MasterKey(label, token, observer)), ...config.vaultMasterKeys],
    'VAULT_PKCS11_KEY_LABELS (or VAULT_MASTER_KEYS)',
    [token],
  );
}
