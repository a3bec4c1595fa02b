import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DevSecret {
  secret: Buffer;
  file: string;
  /** True when this call generated it (the caller warns loudly). */
  created: boolean;
}

const SECRET_BYTES = 32;

/**
 * Development only: a random secret kept in DATA_DIR (mode 0600), so it survives restarts and is
 * shared by the processes of one machine. Production configures real secrets instead.
 */
export function readOrCreateDevSecret(dataDir: string, name: string): DevSecret {
  const file = join(dataDir, name);
  const read = (): Buffer => {
    const secret = readFileSync(file);
    if (secret.length !== SECRET_BYTES)
      throw new Error(`${file} does not hold ${SECRET_BYTES} bytes; delete it to have a new one generated`);
    return secret;
  };
  try {
    return { secret: read(), file, created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(SECRET_BYTES);
  try {
    writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { secret: read(), file, created: false }; // another process won
    throw error;
  }
  return { secret, file, created: true };
}
