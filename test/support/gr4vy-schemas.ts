import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import schemas from '../fixtures/gr4vy-vault-forward-schemas.json';

/**
 * Gr4vy's published schemas for the Vault Forward management routes (test/fixtures, source named
 * there), compiled once. `expectGr4vy(name, body)` fails with Ajv's errors when an answer of ours
 * breaks Gr4vy's contract. Gr4vy's schemas do not close their objects, so fields of ours beyond them pass.
 */
export type Gr4vySchemaName = keyof (typeof schemas)['schemas'];

/**
 * Authentication kinds of ours in Gr4vy's shape beyond Gr4vy's enum, each a documented extension: `oauth2`
 * (decision 0123), so the catalog can offer OAuth 2.0 client credentials. Everything else is Gr4vy's as
 * published.
 */
export const OUR_DEFINITION_KINDS = ['oauth2'];

function withOurKinds(published: typeof schemas.schemas): typeof schemas.schemas {
  const copy = structuredClone(published);
  for (const name of ['PCIForwardAuthenticationDefinition', 'PCIForwardConfigAuthentication'] as const)
    copy[name].properties.kind.enum.push(...OUR_DEFINITION_KINDS);
  return copy;
}

const ajv = new Ajv({ strict: true, allErrors: true });
addFormats(ajv);
// The fixture keeps Gr4vy's component names under `schemas`; refs point into it.
ajv.addKeyword('schemas');
ajv.addSchema({ $id: 'gr4vy', schemas: withOurKinds(schemas.schemas) });

export function gr4vyErrors(name: Gr4vySchemaName, body: unknown): string[] {
  const validate = ajv.getSchema(`gr4vy#/schemas/${name}`)!;
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}

export function expectGr4vy(name: Gr4vySchemaName, body: unknown): void {
  expect({ schema: name, errors: gr4vyErrors(name, body) }).toEqual({ schema: name, errors: [] });
}
