import { html, nothing } from 'lit';
import type { ApiError } from '../api';
import { describedBy, fieldError } from '../ui';

/**
 * The inputs of the "Add authentication" form for one of our kinds, generated from
 * GET /vault-forward/authentication-kinds (enums as selects, PEM as text areas with a file picker, URLs as url inputs).
 */
export interface KindField {
  name: string;
  secret: boolean;
  required: boolean;
  format: string;
  enum?: string[];
  default?: string;
  max_length: number;
  description: string;
}

const PEM_FORMATS = new Set(['pem-certificates', 'pem-private-key', 'public-key', 'private-key']);

/** Markdown-ish `code` in the kinds' descriptions, shown as code without any HTML from the server. */
export function withCode(text: string) {
  return text.split('`').map((part, i) => (i % 2 ? html`<code>${part}</code>` : part));
}

export function kindFieldInput(f: KindField, e: ApiError | null, readFile: (event: Event, target: string) => void) {
  const id = `auth-field-${f.name}`;
  const messages = e?.fieldMessages(`fields.${f.name}`) ?? [];
  const aria = {
    invalid: messages.length ? 'true' : 'false',
    describedby: describedBy(`${id}-help`, messages.length && `${id}-error`),
  };
  const name = `field-${f.name}`;
  let input;
  if (f.format === 'enum' && f.enum) {
    input = html`<select
      id=${id}
      name=${name}
      ?required=${f.required}
      aria-invalid=${aria.invalid}
      aria-describedby=${aria.describedby}
    >
      ${f.required ? nothing : html`<option value="">(not set)</option>`}
      ${f.enum.map((v) => html`<option value=${v} ?selected=${v === f.default}>${v}</option>`)}
    </select>`;
  } else if (PEM_FORMATS.has(f.format)) {
    input = html`<textarea
        id=${id}
        name=${name}
        rows="6"
        spellcheck="false"
        autocomplete="off"
        ?required=${f.required}
        maxlength=${f.max_length}
        class=${f.secret ? 'secret' : ''}
        aria-invalid=${aria.invalid}
        aria-describedby=${aria.describedby}
      ></textarea>
      <label class="file"
        >Or load ${f.name} from a file
        <input type="file" accept=".pem,.crt,.cer,.key,.json,text/plain" @change=${(ev: Event) => readFile(ev, id)}
      /></label>`;
  } else {
    input = html`<input
      id=${id}
      name=${name}
      type=${f.secret ? 'password' : f.format === 'https-url' || f.format === 'outbound-url' ? 'url' : 'text'}
      autocomplete=${f.secret ? 'new-password' : 'off'}
      spellcheck="false"
      ?required=${f.required}
      maxlength=${f.max_length}
      placeholder=${f.default ?? ''}
      aria-invalid=${aria.invalid}
      aria-describedby=${aria.describedby}
    />`;
  }
  const required = f.required ? html` <span class="required">(required)</span>` : nothing;
  const secret = f.secret ? html` <span class="secret-tag">(secret, never shown again)</span>` : nothing;
  return html`<div class="field">
    <label for=${id}>${f.name}${required}${secret}</label>
    ${input}
    <p class="help" id=${`${id}-help`}>
      ${withCode(f.description)}${f.default ? html` Default: <code>${f.default}</code>.` : nothing}
    </p>
    ${fieldError(e, `fields.${f.name}`, `${id}-error`)}
  </div>`;
}
