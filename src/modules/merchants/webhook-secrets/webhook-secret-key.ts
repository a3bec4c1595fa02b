import { randomBytes } from 'node:crypto';
import { boundAad } from '../../vault/secret-sealer';

/** Standard Webhooks: the signing key is 24–64 random bytes, shown as `whsec_` + base64. */
export const SECRET_PREFIX = 'whsec_';
export const SECRET_BYTES = 32;

/** How long a replaced secret keeps signing beside the new one, so receivers can switch without losing a callback. */
export const ROTATION_OVERLAP_HOURS = 24;

export function newSecretKey(): Buffer {
  return randomBytes(SECRET_BYTES);
}

export function formatSecret(key: Buffer): string {
  return `${SECRET_PREFIX}${key.toString('base64')}`;
}

/** The AAD of a sealed webhook secret (also rebuilt by key rotation from SEALED_TABLES). */
export function webhookSecretAad(merchantAccountId: string, id: string): string {
  return boundAad('webhook-secret', merchantAccountId, id);
}
