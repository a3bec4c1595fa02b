import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/**
 * What another context does when a merchant gets a new current secret: it runs inside the creating
 * transaction (so what it changes commits with the secret) and returns what to do once that commits.
 */
type SecretCreatedListener = (manager: EntityManager, merchantAccountId: string) => Promise<() => Promise<void>>;

/**
 * A new secret, told to whoever waits for one (job-end callbacks put off for want of a secret) without this
 * context knowing them: the waiting side registers here, so the import goes from it to the secrets, never back.
 */
@Injectable()
export class WebhookSecretEvents {
  private readonly listeners: SecretCreatedListener[] = [];

  onSecretCreated(listener: SecretCreatedListener): void {
    this.listeners.push(listener);
  }

  /** In the creating transaction: every listener's part of it; resolves to what runs after the commit. */
  async secretCreated(manager: EntityManager, merchantAccountId: string): Promise<() => Promise<void>> {
    const afterCommit: Array<() => Promise<void>> = [];
    for (const listener of this.listeners) afterCommit.push(await listener(manager, merchantAccountId));
    return async () => {
      for (const then of afterCommit) await then();
    };
  }
}
