import { Logger } from '@nestjs/common';
import { defineProblem, ProblemException } from '../../platform/problem/problem';
import { VaultDecryptionError } from './envelope';

/** Problems of the vault's key store. */
export const VaultErrors = {
  keyStoreUnavailable: defineProblem({
    code: 'vault-key-store-unavailable',
    status: 503,
    title: 'Vault key store unavailable',
    description:
      'The hardware security module (PKCS#11 token) that holds the master keys does not answer, so no card can be ' +
      'encrypted or decrypted now; nothing was sent and nothing already accepted is lost. Retry after the seconds ' +
      'Retry-After gives.',
  }),
  masterKeyMismatch: defineProblem({
    code: 'vault-master-key-mismatch',
    status: 503,
    title: 'Vault master keys do not open the stored data',
    description: 'A stored card does not decrypt with the configured master keys (see the log); nothing was sent.',
  }),
};

/** Seconds a caller is told to wait; reconnecting is tried on the next call anyway. */
const RETRY_AFTER_SECONDS = 5;

/** Thrown by a master key whose key store cannot answer; carries no key material, only the key's id. */
export class VaultKeyUnavailableError extends ProblemException {
  constructor(
    readonly masterKeyId: string,
    readonly reason: string,
  ) {
    super(
      VaultErrors.keyStoreUnavailable,
      `The key store holding master key "${masterKeyId}" does not answer (${reason}). Retry later.`,
      undefined,
      { 'retry-after': String(RETRY_AFTER_SECONDS) },
    );
  }
}

/** `open()`; its VaultDecryptionError (decision 0151) to the log (record and key ids) and to the caller as a 503. */
export function openOr503<T>(what: string, open: () => T): T {
  try {
    return open();
  } catch (error) {
    if (!(error instanceof VaultDecryptionError)) throw error;
    new Logger('Vault').error(error.message);
    const detail = `The ${what} does not decrypt with this instance's vault master keys; nothing was sent.`;
    throw Object.assign(new ProblemException(VaultErrors.masterKeyMismatch, detail), { cause: error });
  }
}
