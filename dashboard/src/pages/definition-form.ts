import { html, nothing } from 'lit';
import type { ApiError } from '../api';
import { describedBy, fieldError } from '../ui';

/**
 * The "Add authentication" form of a config made from a definition (GET /vault-forward/definitions/{id}):
 * one input per field the definition declares for the chosen kind, and the body in Gr4vy's shape,
 * `{kind, display_name, fields: [{key, value}]}`. A config with hosts of its own keeps the form
 * generated from our kinds (authentications.ts), which knows their enums, defaults and descriptions.
 */
export interface DefinitionField {
  key: string;
  display_name: string;
  required: boolean;
  format: 'text' | 'multiline' | 'file' | 'number';
  secret: boolean;
}

export interface AuthenticationDefinition {
  kind: string;
  title: string;
  description: string;
  fields: DefinitionField[];
}

export interface Definition {
  id: string;
  display_name: string;
  authentications: AuthenticationDefinition[];
}

export function definitionFieldInput(
  f: DefinitionField,
  error: ApiError | null,
  readFile: (event: Event, target: string) => void,
) {
  const id = `def-field-${f.key}`;
  const messages = error?.fieldMessages(`fields.${f.key}`) ?? [];
  const invalid = messages.length ? 'true' : 'false';
  const described = describedBy(messages.length && `${id}-error`);
  const name = `dfield-${f.key}`;
  const input =
    f.format === 'multiline' || f.format === 'file'
      ? html`<textarea
            id=${id}
            name=${name}
            rows="6"
            spellcheck="false"
            autocomplete="off"
            ?required=${f.required}
            class=${f.secret ? 'secret' : ''}
            aria-invalid=${invalid}
            aria-describedby=${described}
          ></textarea>
          <label class="file"
            >Or load ${f.display_name} from a file <input type="file" @change=${(ev: Event) => readFile(ev, id)}
          /></label>`
      : html`<input
          id=${id}
          name=${name}
          type=${f.secret ? 'password' : 'text'}
          inputmode=${f.format === 'number' ? 'decimal' : 'text'}
          autocomplete=${f.secret ? 'new-password' : 'off'}
          spellcheck="false"
          ?required=${f.required}
          aria-invalid=${invalid}
          aria-describedby=${described}
        />`;
  const required = f.required ? html` <span class="required">(required)</span>` : nothing;
  const secret = f.secret ? html` <span class="secret-tag">(secret, never shown again)</span>` : nothing;
  return html`<div class="field">
    <label for=${id}>${f.display_name}${required}${secret}</label>
    ${input} ${fieldError(error, `fields.${f.key}`, `${id}-error`)}
  </div>`;
}

/** Gr4vy's body: every field filled in, by key (an optional field left empty is not sent). */
export function definitionBody(auth: AuthenticationDefinition, data: FormData, displayName: string) {
  const fields: Array<{ key: string; value: string }> = [];
  for (const f of auth.fields) {
    const value = data.get(`dfield-${f.key}`);
    if (typeof value === 'string' && value !== '') fields.push({ key: f.key, value });
  }
  return { kind: auth.kind, display_name: displayName, fields };
}
