import type { ProblemFieldError } from '../../../platform/problem/problem';
import { AuthenticationKind, KINDS } from '../authentication-kinds/kinds';
import { fieldErrors } from '../authentication-kinds/method-fields';

/**
 * A Vault Forward definition as Gr4vy publishes it (PCIForwardDefinition): a third party with its hosts
 * (origins) and the authentication kinds it takes, each with the fields a merchant fills in. Ours adds,
 * per authentication, how it maps onto one of our mechanisms: each field's `maps_to` (a field of our
 * kind) and `settings` (our non-secret fields fixed by the definition, e.g. a signature's template).
 */
export const DEFINITION_KINDS = ['mle', 'mtls', 'signature'] as const;
export type DefinitionKind = (typeof DEFINITION_KINDS)[number];

/** Gr4vy's kinds are aliases of ours. */
export const OUR_KIND: Readonly<Record<DefinitionKind, AuthenticationKind>> = {
  mle: 'jwe-payload',
  mtls: 'mutual-tls',
  signature: 'hmac-signature',
};
/** Ours to Gr4vy's; `template-secrets` is ours only (decision 0102), so no Gr4vy-shaped method has it. */
export const DEFINITION_KIND_OF: Readonly<Partial<Record<AuthenticationKind, DefinitionKind>>> = {
  'jwe-payload': 'mle',
  'mutual-tls': 'mtls',
  'hmac-signature': 'signature',
};

export const FIELD_FORMATS = ['text', 'multiline', 'file', 'number'] as const;
export type DefinitionFieldFormat = (typeof FIELD_FORMATS)[number];

export interface DefinitionField {
  key: string;
  display_name: string;
  required: boolean;
  format: DefinitionFieldFormat;
  secret: boolean;
  /** The field of our kind that takes the value. */
  maps_to: string;
}

export interface AuthenticationDefinition {
  kind: DefinitionKind;
  title: string;
  description: string;
  fields: DefinitionField[];
  /** Our kind's non-secret fields that the definition fixes. */
  settings: Record<string, string>;
}

export interface Definition {
  id: string;
  display_name: string;
  /** Origins: `https://host` or `https://host:port`. */
  hosts: string[];
  authentications: AuthenticationDefinition[];
  /** Where it comes from: the shipped catalog, an instance administrator, or one config (its custom definition). */
  source: 'catalog' | 'instance' | 'custom';
}

/** Definition ids are slugs; `custom-` is kept for the generated definitions of configs made with hosts. */
export const DEFINITION_ID = /^[a-z0-9](?:[a-z0-9-]{0,48}[a-z0-9])?$/;
export const CUSTOM_PREFIX = 'custom-';
export const FIELD_KEY = /^[a-z][a-z0-9_]{0,49}$/;

export function customDefinitionId(configId: string): string {
  return `${CUSTOM_PREFIX}${configId}`;
}

const MULTILINE_FORMATS = new Set(['pem-certificates', 'pem-private-key', 'public-key', 'private-key']);

/**
 * The definition of a config made with our own `hosts`: every kind, every field of ours under its own
 * name, nothing fixed. Its hosts are the config's.
 */
export function customDefinition(configId: string, displayName: string, hosts: string[]): Definition {
  return {
    id: customDefinitionId(configId),
    display_name: displayName,
    hosts,
    source: 'custom',
    authentications: DEFINITION_KINDS.map((kind) => {
      const ours = KINDS[OUR_KIND[kind]];
      return {
        kind,
        title: ours.title,
        description: ours.description,
        settings: {},
        fields: ours.fields.map((f) => ({
          key: f.name,
          display_name: f.name,
          required: f.required,
          format: MULTILINE_FORMATS.has(f.format) ? 'multiline' : 'text',
          secret: f.secret,
          maps_to: f.name,
        })),
      };
    }),
  };
}

function err(name: string, message: string): ProblemFieldError {
  return { location: 'body', name, message };
}

/**
 * An origin as a definition or config lists it: scheme https (or http), host, optional port, nothing
 * else; returned normalised (lower-case, default port dropped) or null.
 */
export function parseOrigin(value: string): string | null {
  if (!/^https?:\/\/[^/?#@\s]+$/i.test(value)) return null;
  try {
    const url = new URL(value);
    return url.origin === 'null' ? null : url.origin;
  } catch {
    return null;
  }
}

/**
 * The errors of an administrator's authentication definitions: each field must map onto a distinct
 * field of our kind, declare it secret when ours is (a secret must never be returned), and our required
 * fields must be mapped or fixed by `settings`, whose values pass our own field rules.
 */
export function authenticationDefinitionErrors(authentications: AuthenticationDefinition[]): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  const kinds = new Set<string>();
  authentications.forEach((auth, a) => {
    const at = `authentications.${a}`;
    if (kinds.has(auth.kind)) errors.push(err(`${at}.kind`, `${auth.kind} is listed twice`));
    kinds.add(auth.kind);
    const ours = KINDS[OUR_KIND[auth.kind]];
    const described = new Map(ours.fields.map((f) => [f.name, f]));
    const mapped = new Set<string>();
    const keys = new Set<string>();
    auth.fields.forEach((field, i) => {
      const name = `${at}.fields.${i}`;
      if (keys.has(field.key)) errors.push(err(`${name}.key`, `${field.key} is listed twice`));
      keys.add(field.key);
      const target = described.get(field.maps_to);
      if (!target) {
        errors.push(err(`${name}.maps_to`, `must be a field of ${ours.kind}: ${[...described.keys()].join(', ')}`));
        return;
      }
      if (mapped.has(field.maps_to)) errors.push(err(`${name}.maps_to`, `${field.maps_to} is mapped twice`));
      mapped.add(field.maps_to);
      if (target.secret && !field.secret)
        errors.push(err(`${name}.secret`, `${field.maps_to} is secret in ${ours.kind}; declare it secret`));
      if (target.required && !field.required)
        errors.push(err(`${name}.required`, `${field.maps_to} is required by ${ours.kind}`));
    });
    for (const [setting] of Object.entries(auth.settings)) {
      const target = described.get(setting);
      if (!target) errors.push(err(`${at}.settings.${setting.slice(0, 64)}`, `is not a field of ${ours.kind}`));
      else if (target.secret) errors.push(err(`${at}.settings.${setting}`, 'is secret; a definition fixes no secret'));
      else if (mapped.has(setting)) errors.push(err(`${at}.settings.${setting}`, 'is also a field of the definition'));
    }
    // Our rules on the settings' values; the missing required ones must come from the fields.
    for (const e of fieldErrors(ours.kind, auth.settings)) {
      const name = e.name.slice('fields.'.length);
      if (e.message === 'is required' && mapped.has(name)) continue;
      if (e.message === 'is required') errors.push(err(`${at}.fields`, `map a field to ${name}, which is required`));
      else if (described.has(name)) errors.push(err(`${at}.settings.${name}`, e.message));
    }
  });
  return errors;
}
