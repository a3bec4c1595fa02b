import { html, nothing } from 'lit';
import { api, ApiError, Page } from '../api';
import {
  announce,
  copyText,
  describedBy,
  fieldError,
  formatTime,
  formText,
  merchantBase,
  pager,
  problemAlert,
  View,
} from '../ui';
import { Definition, definitionBody, definitionFieldInput } from './definition-form';
import { KindField, kindFieldInput, withCode } from './kind-form';
import type { ForwardConfig } from './forwarding-configs';

interface Kind {
  kind: string;
  title: string;
  description: string;
  fields: KindField[];
}

interface Method {
  id: string;
  kind: string;
  label: string;
  /** Ours: an object; a method made in Gr4vy's shape: `[{key, value}]` by its definition's keys. */
  fields: Record<string, string> | Array<{ key: string; value: string }>;
  details: Record<string, unknown>;
  warnings: Array<{ code?: string; field?: string; message: string }>;
  created_at: string;
}

function warningItem(w: Method['warnings'][number]) {
  const where = w.field ? ` (${w.field})` : '';
  return html`<li><span aria-hidden="true">⚠ </span><strong>Warning${where}:</strong> ${w.message}</li>`;
}

/**
 * Edit authentication methods of one forwarding config: the list (non-secret fields, derived
 * details, warnings, UUID) and "Add authentication", whose form per kind is generated from
 * GET /vault-forward/authentication-kinds. Secret values live in the form only until Add answers.
 */
export class VfAuthentications extends View {
  static override properties = {
    merchant: {},
    configId: {},
    config: { state: true },
    definition: { state: true },
    kinds: { state: true },
    page: { state: true },
    error: { state: true },
    adding: { state: true },
    kind: { state: true },
    formError: { state: true },
    added: { state: true },
    deleting: { state: true },
    copied: { state: true },
  };
  declare merchant: string | null;
  declare configId: string;
  declare config: ForwardConfig | null;
  /** The config's definition, when it was made from one (not a custom config): its fields make the form. */
  declare definition: Definition | null;
  declare kinds: Kind[];
  declare page: Page<Method> | null;
  declare error: ApiError | null;
  declare adding: boolean;
  declare kind: string;
  declare formError: ApiError | null;
  declare added: Method | null;
  declare deleting: Method | null;
  declare copied: string;
  private cursor: string | undefined;

  constructor() {
    super();
    this.merchant = null;
    this.config = null;
    this.definition = null;
    this.kinds = [];
    this.page = null;
    this.error = null;
    this.adding = false;
    this.kind = '';
    this.formError = null;
    this.added = null;
    this.deleting = null;
    this.copied = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private path(suffix = ''): string {
    return `/vault-forward/configs/${encodeURIComponent(this.configId)}/authentications${suffix}`;
  }

  private async load(): Promise<void> {
    try {
      const [config, kinds] = await Promise.all([
        api<ForwardConfig>(`/vault-forward/configs/${encodeURIComponent(this.configId)}`, { merchant: this.merchant }),
        api<{ items: Kind[] }>('/vault-forward/authentication-kinds', { merchant: this.merchant }),
      ]);
      this.config = config;
      this.kinds = kinds.items;
      if (config.definition_id && !config.definition_id.startsWith('custom-')) {
        this.definition = await api<Definition>(
          `/vault-forward/definitions/${encodeURIComponent(config.definition_id)}`,
          { merchant: this.merchant },
        );
      }
      this.kind ||= this.definition?.authentications[0]?.kind ?? kinds.items[0]?.kind ?? '';
      await this.loadPage();
    } catch (error) {
      this.error = error as ApiError;
    }
  }

  private async loadPage(cursor = this.cursor): Promise<void> {
    try {
      this.page = await api<Page<Method>>(this.path(), { merchant: this.merchant, query: { limit: 20, cursor } });
      this.cursor = cursor;
      this.error = null;
    } catch (error) {
      this.error = error as ApiError;
    }
  }

  private async readFile(event: Event, target: string): Promise<void> {
    const input = event.target as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    const area = this.querySelector<HTMLTextAreaElement>(`#${target}`);
    if (area) area.value = file.size > 256 * 1024 ? '' : await file.text();
    input.value = '';
    announce(`${file.name} loaded.`);
  }

  private async add(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const data = new FormData(form);
    try {
      const created = await api<Method>(this.path(), {
        method: 'POST',
        merchant: this.merchant,
        body: this.definition ? this.definitionRequest(data) : this.ourRequest(data),
      });
      form.reset();
      this.formError = null;
      this.adding = false;
      this.added = created;
      this.copied = '';
      await this.loadPage(undefined);
      await this.updateComplete;
      this.querySelector<HTMLElement>('#added-title')?.focus();
    } catch (error) {
      this.formError = error as ApiError;
      await this.updateComplete;
      this.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
    }
  }

  private ourRequest(data: FormData) {
    const kind = this.kinds.find((k) => k.kind === this.kind)!;
    const fields: Record<string, string> = {};
    for (const f of kind.fields) {
      const value = data.get(`field-${f.name}`);
      // An optional field left empty is absent, not an empty value (values are used as entered).
      if (typeof value === 'string' && value !== '') fields[f.name] = value;
    }
    return { kind: kind.kind, label: formText(data, 'label'), fields };
  }

  private definitionRequest(data: FormData) {
    const auth = this.definition!.authentications.find((a) => a.kind === this.kind)!;
    return definitionBody(auth, data, formText(data, 'label'));
  }

  private async deleteMethod(method: Method): Promise<void> {
    try {
      await api(this.path(`/${method.id}`), { method: 'DELETE', merchant: this.merchant });
      this.deleting = null;
      if (this.added?.id === method.id) this.added = null;
      announce(`Authentication method “${method.label}” deleted.`);
      await this.loadPage();
    } catch (error) {
      this.deleting = null;
      this.error = error as ApiError;
    }
  }

  private async copy(id: string, element: string): Promise<void> {
    this.copied = await copyText(id, this.querySelector(`#${element}`));
    announce(this.copied);
  }

  private addForm() {
    const auth = this.definition?.authentications.find((a) => a.kind === this.kind);
    const kind = auth ?? this.kinds.find((k) => k.kind === this.kind);
    const choices = this.definition?.authentications ?? this.kinds;
    // A definition's methods are named by display_name (Gr4vy's), ours by label.
    const nameField = this.definition ? 'display_name' : 'label';
    const e = this.formError;
    const shown = [
      'kind',
      nameField,
      ...(auth
        ? auth.fields.map((f) => `fields.${f.key}`)
        : ((kind as Kind | undefined)?.fields.map((f) => `fields.${f.name}`) ?? [])),
    ];
    const inputs = auth
      ? auth.fields.map((f) => definitionFieldInput(f, e, (ev, id) => void this.readFile(ev, id)))
      : (kind as Kind | undefined)?.fields.map((f) => kindFieldInput(f, e, (ev, id) => void this.readFile(ev, id)));
    return html`<form class="card" @submit=${this.add} aria-labelledby="add-title" autocomplete="off">
      <h2 id="add-title">Add authentication</h2>
      <label for="auth-kind">Method</label>
      <select
        id="auth-kind"
        name="kind"
        @change=${(ev: Event) => ((this.kind = (ev.target as HTMLSelectElement).value), (this.formError = null))}
        aria-describedby=${describedBy('auth-kind-help', e?.fieldMessages('kind').length && 'auth-kind-error')}
      >
        ${choices.map((k) => html`<option value=${k.kind} ?selected=${k.kind === this.kind}>${k.title} (${k.kind})</option>`)}
      </select>
      <p class="help" id="auth-kind-help">${kind ? withCode(kind.description) : nothing}</p>
      ${fieldError(e, 'kind', 'auth-kind-error')}
      <label for="auth-label">Label</label>
      <input
        id="auth-label"
        name="label"
        required
        maxlength=${this.definition ? 50 : 100}
        aria-invalid=${e?.fieldMessages(nameField).length ? 'true' : 'false'}
        aria-describedby=${describedBy(e?.fieldMessages(nameField).length && 'auth-label-error')}
      />
      ${fieldError(e, nameField, 'auth-label-error')} ${inputs ?? nothing}
      ${e && e.hasErrorsBeyond(shown) ? problemAlert(e) : e && !(e.problem.errors ?? []).length ? problemAlert(e) : nothing}
      <div class="actions">
        <button type="submit">Add</button>
        <button type="button" class="secondary" @click=${() => ((this.adding = false), (this.formError = null))}>
          Cancel
        </button>
      </div>
    </form>`;
  }

  private details(method: Method) {
    const kind = this.kinds.find((k) => k.kind === method.kind);
    const auth = this.definition?.authentications.find((a) => a.kind === method.kind);
    const entries = Array.isArray(method.fields)
      ? method.fields.map((f) => [f.key, f.value] as const)
      : Object.entries(method.fields);
    const facts = Object.entries(method.details ?? {});
    return html`<article class="card method" aria-labelledby=${`m-${method.id}`}>
      <h3 id=${`m-${method.id}`}>${method.label}</h3>
      <p class="kind">
        ${kind?.title ?? auth?.title ?? method.kind} <code>${method.kind}</code> · added
        ${formatTime(method.created_at)}
      </p>
      <p class="uuid">
        UUID <code id=${`uuid-${method.id}`} data-testid="method-uuid">${method.id}</code>
        <button
          type="button"
          class="small"
          @click=${() => this.copy(method.id, `uuid-${method.id}`)}
          aria-label=${`Copy the UUID of ${method.label}`}
        >
          Copy
        </button>
      </p>
      ${
        entries.length
          ? html`<dl class="fields">
              ${entries.map(
                ([k, v]) =>
                  html`<dt>${k}</dt>
                    <dd><code class="value">${v.length > 200 ? `${v.slice(0, 200)}…` : v}</code></dd>`,
              )}
            </dl>`
          : nothing
      }
      ${
        facts.length
          ? html`<dl class="fields details">
              ${facts.map(
                ([k, v]) =>
                  html`<dt>${k}</dt>
                    <dd>${typeof v === 'object' ? JSON.stringify(v) : String(v as string | number | boolean)}</dd>`,
              )}
            </dl>`
          : nothing
      }
      ${
        method.warnings.length
          ? html`<ul class="warnings" aria-label="Warnings">
              ${method.warnings.map(warningItem)}
            </ul>`
          : nothing
      }
      <p class="secret-note">
        Secret fields
        (${
          (auth
            ? auth.fields.filter((f) => f.secret).map((f) => f.display_name)
            : (kind?.fields ?? []).filter((f) => f.secret).map((f) => f.name)
          ).join(', ') || 'none'
        })
        are stored encrypted and never shown.
      </p>
      <button type="button" class="danger" @click=${() => (this.deleting = method)}>Delete</button>
    </article>`;
  }

  private confirmDelete() {
    const method = this.deleting;
    if (!method) return nothing;
    return html`<div class="dialog-backdrop">
      <div
        class="dialog"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="delete-title"
        aria-describedby="delete-text"
        @keydown=${(ev: KeyboardEvent) => ev.key === 'Escape' && (this.deleting = null)}
      >
        <h2 id="delete-title">Delete “${method.label}”?</h2>
        <p id="delete-text">
          Forwards that name <code>${method.id}</code> in <code>x-vault-forward-authentications</code> will be refused.
          This cannot be undone.
        </p>
        <div class="actions">
          <button type="button" class="danger" @click=${() => this.deleteMethod(method)}>Delete</button>
          <button type="button" class="secondary" id="delete-cancel" @click=${() => (this.deleting = null)}>
            Cancel
          </button>
        </div>
      </div>
    </div>`;
  }

  override updated(changed: Map<string, unknown>): void {
    if (changed.has('deleting') && this.deleting) this.querySelector<HTMLElement>('#delete-cancel')?.focus();
  }

  override render() {
    const base = merchantBase(this.merchant);
    const config = this.config;
    const hosts = config
      ? html`<p>
          Hosts: ${config.hosts.map((h, i) => html`${i ? ', ' : ''}<code>${h}</code>`)} · methods
          ${config.methods.join(', ')}
        </p>`
      : nothing;
    return html`
      <p class="breadcrumb">
        Settings →
        ${
          this.merchant
            ? html`<a href="#/merchants">Merchants</a> → <a href=${base}>${this.merchant}</a>`
            : html`<a href=${base}>Configuration</a>`
        }
        → <a href=${`${base}/vault-forwarding`}>Vault Forwarding</a>
      </p>
      <h1>Authentication methods${this.config ? html` · ${this.config.display_name}` : nothing}</h1>
      ${hosts} ${problemAlert(this.error)}
      ${
        this.added
          ? html`<section class="alert success" aria-labelledby="added-title">
              <h2 id="added-title" tabindex="-1"><span aria-hidden="true">✓ </span>Added “${this.added.label}”</h2>
              <p>Use this UUID in the <code>x-vault-forward-authentications</code> header of a forwarding request:</p>
              <p class="uuid big">
                <code id="added-uuid" data-testid="added-uuid">${this.added.id}</code>
                <button type="button" @click=${() => this.copy(this.added!.id, 'added-uuid')}>Copy UUID</button>
              </p>
              <p>Its secret fields are stored encrypted and will not be shown again.</p>
              ${this.copied ? html`<p class="help">${this.copied}</p>` : nothing}
            </section>`
          : nothing
      }
      ${
        this.adding
          ? this.addForm()
          : html`<button
              type="button"
              @click=${() => ((this.adding = true), (this.added = null), (this.formError = null))}
            >
              Add authentication
            </button>`
      }
      <h2>Methods of this endpoint</h2>
      ${
        this.page
          ? html`${this.page.items.length ? this.page.items.map((m) => this.details(m)) : html`<p>No authentication methods yet.</p>`}
            ${pager('Authentication methods', this.page, (c) => void this.loadPage(c))}`
          : this.error
            ? nothing
            : html`<p>Loading…</p>`
      }
      ${this.confirmDelete()}
    `;
  }
}
customElements.define('vf-authentications', VfAuthentications);
