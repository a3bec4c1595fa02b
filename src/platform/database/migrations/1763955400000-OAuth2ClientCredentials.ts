import { MigrationInterface, QueryRunner } from 'typeorm';

const CONSTRAINT = 'vault_forward_authentications_kind_check';
const KIND = 'oauth2-client-credentials';

/**
 * Decision 0123: the `oauth2-client-credentials` kind. The kind check is read and written back with
 * this kind added (or taken out), not restated: other kinds added beside it stay allowed whichever
 * migration runs first.
 */
export class OAuth2ClientCredentials1763955400000 implements MigrationInterface {
  name = 'OAuth2ClientCredentials1763955400000';

  async up(q: QueryRunner): Promise<void> {
    const kinds = await allowedKinds(q);
    if (!kinds.includes(KIND)) await setKinds(q, [...kinds, KIND]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM vault_forward_authentications WHERE kind = $1`, [KIND]);
    await setKinds(
      q,
      (await allowedKinds(q)).filter((kind) => kind !== KIND),
    );
  }
}

/** The kinds the check lists, from its definition as PostgreSQL prints it (`… ARRAY['a'::text, …]`). */
async function allowedKinds(q: QueryRunner): Promise<string[]> {
  const rows = (await q.query(`SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conname = $1`, [
    CONSTRAINT,
  ])) as Array<{ definition: string }>;
  return [...(rows[0]?.definition ?? '').matchAll(/'([a-z0-9-]+)'/g)].map((match) => match[1]);
}

async function setKinds(q: QueryRunner, kinds: string[]): Promise<void> {
  // Kind names are this file's and the earlier migrations' constants (lower-case, digits, '-'): no quoting to escape.
  const list = kinds.map((kind) => `'${kind}'`).join(', ');
  await q.query(`ALTER TABLE vault_forward_authentications DROP CONSTRAINT ${CONSTRAINT}`);
  await q.query(`ALTER TABLE vault_forward_authentications ADD CONSTRAINT ${CONSTRAINT} CHECK (kind IN (${list}))`);
}
