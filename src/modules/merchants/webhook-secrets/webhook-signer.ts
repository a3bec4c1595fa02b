import { createHmac, createSecretKey } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SecretSealer } from '../../vault/secret-sealer';
import { webhookSecretAad } from './webhook-secret-key';
import { WebhookSecretsRepository } from './webhook-secrets.repository';

interface WebhookMessage {
  /** The message id (webhook-id), the same on every delivery attempt of one message. */
  id: string;
  /** Unix seconds (webhook-timestamp) of this delivery attempt. */
  timestamp: number;
  /** The exact bytes that will be sent. */
  body: string | Buffer;
}

/** The merchant account has no webhook secret that signs now; the message cannot be signed. */
export class NoWebhookSecretError extends Error {
  constructor() {
    super('the merchant account has no webhook signing secret (POST /vault-forward/webhook-secrets)');
    this.name = 'NoWebhookSecretError';
  }
}

/**
 * Signs a callback per the Standard Webhooks specification: HMAC-SHA256 over `id.timestamp.body`,
 * keyed by the secret's bytes (the base64 after `whsec_`). During a rotation's overlap every secret
 * that still signs contributes a `v1,` signature, the current one first, so a receiver that knows
 * either accepts the message.
 */
@Injectable()
export class WebhookSigner {
  constructor(
    private readonly secrets: WebhookSecretsRepository,
    private readonly sealer: SecretSealer,
  ) {}

  async signWebhook(merchantAccountId: string, message: WebhookMessage): Promise<Record<string, string>> {
    return (await this.signerFor(merchantAccountId))(message);
  }

  /**
   * The secrets that sign now for this merchant account, read once, as a function that signs messages with them
   * (opened per message, never kept in the clear): for a caller that must know it can sign before it acts, and signs
   * afterwards. NoWebhookSecretError when the account has none.
   */
  async signerFor(merchantAccountId: string): Promise<(message: WebhookMessage) => Record<string, string>> {
    const rows = await this.secrets.signing(merchantAccountId);
    if (rows.length === 0) throw new NoWebhookSecretError();
    return (message) => {
      if (!Number.isSafeInteger(message.timestamp) || message.timestamp < 0)
        throw new Error('webhook timestamp must be whole Unix seconds');
      // The id goes into a header and into the signed content, where a '.' would blur its boundary.
      if (!/^[A-Za-z0-9_-]{1,100}$/.test(message.id))
        throw new Error('webhook id must be 1–100 letters, digits, - or _');
      const timestamp = String(message.timestamp);
      const signed = Buffer.concat([
        Buffer.from(`${message.id}.${timestamp}.`, 'utf8'),
        Buffer.isBuffer(message.body) ? message.body : Buffer.from(message.body, 'utf8'),
      ]);
      const signatures = rows.map((row) => {
        const key = this.sealer.open(
          webhookSecretAad(merchantAccountId, row.id),
          { ciphertext: row.ciphertext, wrappedKey: row.wrapped_key, masterKeyId: row.master_key_id },
          `webhook secret ${row.id}`,
        );
        try {
          // A KeyObject, not the Buffer: Node.js 24 checks a Buffer key at ~25 µs a call (docs/decisions/0105).
          return `v1,${createHmac('sha256', createSecretKey(key)).update(signed).digest('base64')}`;
        } finally {
          key.fill(0);
        }
      });
      return { 'webhook-id': message.id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
    };
  }
}
