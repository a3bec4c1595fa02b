import { html, nothing } from 'lit';
import { api, ApiError, Page } from '../api';
import {
  announce,
  dataTable,
  describedBy,
  fieldError,
  formText,
  merchantBase,
  pager,
  problemAlert,
  statusBadge,
  View,
} from '../ui';

export interface ForwardConfig {
  id: string;
  /** A definition's id, or `custom-<id>` for a config made with hosts of its own. */
  definition_id: string;
  display_name: string;
  hosts: string[];
  methods: string[];
  enabled: boolean;
  /** Whether its forwards' records keep the redacted request and answer (decision 0138), and for how many days. */
  record_bodies: boolean;
  record_bodies_retention_days: number;
}

/** What a config's records keep, as the list and the form say it. */
export function recordBodiesText(
  config: Pick<ForwardConfig, 'record_bodies' | 'record_bodies_retention_days'>,
): string {
  const days = config.record_bodies_retention_days;
  return config.record_bodies ? `Recorded, kept ${days} day${days === 1 ? '' : 's'}` : 'Not recorded';
}

/** A chosen action closes its menu (the row is reused when the list reloads). */
function closeMenu(event: Event): void {
  (event.target as HTMLElement).closest('details')?.removeAttribute('open');
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const FIELDS = ['display_name', 'hosts', 'methods', 'enabled', 'record_bodies', 'record_bodies_retention_days'];

/** The Vault Forwarding tab: the endpoints enabled for the merchant, added, edited, enabled and disabled here. */
export class VfForwardingConfigs extends View {
  static override properties = {
    merchant: {},
    page: { state: true },
    error: { state: true },
    editing: { state: true },
    formError: { state: true },
  };
  declare merchant: string | null;
  declare page: Page<ForwardConfig> | null;
  declare error: ApiError | null;
  /** 'new', a config being edited, or nothing. */
  declare editing: 'new' | ForwardConfig | null;
  declare formError: ApiError | null;
  private cursor: string | undefined;

  constructor() {
    super();
    this.merchant = null;
    this.page = null;
    this.error = null;
    this.editing = null;
    this.formError = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(cursor = this.cursor): Promise<void> {
    try {
      this.page = await api<Page<ForwardConfig>>('/vault-forward/configs', {
        merchant: this.merchant,
        query: { limit: 20, cursor },
      });
      this.cursor = cursor;
      this.error = null;
    } catch (error) {
      this.error = error as ApiError;
    }
  }

  private async submit(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const data = new FormData(form);
    const body = {
      display_name: formText(data, 'display_name'),
      hosts: formText(data, 'hosts')
        .split(/[\s,]+/)
        .filter(Boolean),
      methods: data.getAll('methods').map(String),
      enabled: data.get('enabled') === 'on',
      record_bodies: data.get('record_bodies') === 'on',
      record_bodies_retention_days: Number(formText(data, 'record_bodies_retention_days')),
    };
    const existing = this.editing !== 'new' ? this.editing : null;
    try {
      const saved = await api<ForwardConfig>(
        existing ? `/vault-forward/configs/${existing.id}` : '/vault-forward/configs',
        {
          method: existing ? 'PUT' : 'POST',
          merchant: this.merchant,
          body,
        },
      );
      this.editing = null;
      this.formError = null;
      announce(`Forwarding config “${saved.display_name}” ${existing ? 'saved' : 'added'}.`);
      await this.load(existing ? this.cursor : undefined);
    } catch (error) {
      this.formError = error as ApiError;
      await this.updateComplete;
      this.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
    }
  }

  private async toggle(config: ForwardConfig): Promise<void> {
    try {
      await api(`/vault-forward/configs/${config.id}`, {
        method: 'PUT',
        merchant: this.merchant,
        body: { enabled: !config.enabled },
      });
      announce(`“${config.display_name}” ${config.enabled ? 'disabled' : 'enabled'}.`);
      await this.load();
    } catch (error) {
      this.error = error as ApiError;
    }
  }

  private form() {
    const config = this.editing !== 'new' ? this.editing : null;
    const e = this.formError;
    const invalid = (name: string) => (e?.fieldMessages(name).length ? 'true' : 'false');
    return html`<form class="card" @submit=${this.submit} aria-labelledby="config-form-title">
      <h2 id="config-form-title">${config ? `Edit “${config.display_name}”` : 'Add forwarding config'}</h2>
      <label for="cfg-name">Name</label>
      <input
        id="cfg-name"
        name="display_name"
        required
        maxlength="50"
        .value=${config?.display_name ?? ''}
        aria-invalid=${invalid('display_name')}
        aria-describedby=${describedBy(e?.fieldMessages('display_name').length && 'cfg-name-error')}
      />
      ${fieldError(e, 'display_name', 'cfg-name-error')}
      <label for="cfg-hosts">Hosts</label>
      <textarea
        id="cfg-hosts"
        name="hosts"
        rows="3"
        required
        .value=${config?.hosts.join('\n') ?? ''}
        aria-invalid=${invalid('hosts')}
        aria-describedby=${describedBy('cfg-hosts-help', e?.fieldMessages('hosts').length && 'cfg-hosts-error')}
      ></textarea>
      <p class="help" id="cfg-hosts-help">
        One per line: an exact host name, with <code>:port</code> when it is not 443, or an origin such as
        <code>https://api.example.com:8443</code> (that scheme and port only); no path.
      </p>
      ${fieldError(e, 'hosts', 'cfg-hosts-error')}
      <fieldset
        aria-invalid=${invalid('methods')}
        aria-describedby=${describedBy(e?.fieldMessages('methods').length && 'cfg-methods-error')}
      >
        <legend>HTTP methods</legend>
        ${METHODS.map(
          (m) =>
            html`<label class="inline"
              ><input
                type="checkbox"
                name="methods"
                value=${m}
                .checked=${config ? config.methods.includes(m) : ['POST', 'PUT', 'PATCH'].includes(m)}
              />
              ${m}</label
            >`,
        )}
      </fieldset>
      ${fieldError(e, 'methods', 'cfg-methods-error')}
      <fieldset aria-describedby="cfg-bodies-help">
        <legend>Request and answer bodies</legend>
        <label class="inline"
          ><input type="checkbox" name="record_bodies" .checked=${config?.record_bodies ?? false} /> Record bodies (for
          debugging an integration)</label
        >
        ${fieldError(e, 'record_bodies', 'cfg-bodies-error')}
        <label for="cfg-bodies-days">Keep them (days, 1–30)</label>
        <input
          id="cfg-bodies-days"
          name="record_bodies_retention_days"
          type="number"
          min="1"
          max="30"
          required
          .value=${String(config?.record_bodies_retention_days ?? 7)}
          aria-invalid=${invalid('record_bodies_retention_days')}
          aria-describedby=${describedBy(
            e?.fieldMessages('record_bodies_retention_days').length && 'cfg-bodies-days-error',
          )}
        />
        ${fieldError(e, 'record_bodies_retention_days', 'cfg-bodies-days-error')}
        <p class="help" id="cfg-bodies-help">
          Off by default: a forward's record then keeps who, which card, where and the outcome, but no body. On, each
          record also keeps the request as sent and the answer, card numbers masked and values filled in shown as
          placeholders, for the days set here; turn it off once the integration works.
        </p>
      </fieldset>
      <label class="inline"><input type="checkbox" name="enabled" .checked=${config?.enabled ?? true} /> Enabled</label>
      ${fieldError(e, 'enabled', 'cfg-enabled-error')} ${e && e.hasErrorsBeyond(FIELDS) ? problemAlert(e) : nothing}
      <div class="actions">
        <button type="submit">${config ? 'Save' : 'Add'}</button>
        <button type="button" class="secondary" @click=${() => ((this.editing = null), (this.formError = null))}>
          Cancel
        </button>
      </div>
    </form>`;
  }

  private row(config: ForwardConfig) {
    const authHref = `${merchantBase(this.merchant)}/vault-forwarding/${config.id}/authentications`;
    return html`<tr>
      <th scope="row">${config.display_name}</th>
      <td>
        <ul class="plain">
          ${config.hosts.map((h) => html`<li><code>${h}</code></li>`)}
        </ul>
      </td>
      <td>${config.methods.join(', ')}</td>
      <td>${config.enabled ? statusBadge('ok', 'Enabled') : statusBadge('neutral', 'Disabled')}</td>
      <td>${config.record_bodies ? statusBadge('busy', recordBodiesText(config)) : recordBodiesText(config)}</td>
      <td>
        <details class="menu">
          <summary aria-label=${`Actions for ${config.display_name}`}>Actions</summary>
          <ul role="list">
            <li>
              <button
                type="button"
                @click=${(e: Event) => (closeMenu(e), (this.editing = config), (this.formError = null))}
              >
                Edit
              </button>
            </li>
            <li>
              <button type="button" @click=${(e: Event) => (closeMenu(e), this.toggle(config))}>
                ${config.enabled ? 'Disable' : 'Enable'}
              </button>
            </li>
            <li><a href=${authHref}>Edit authentication methods</a></li>
          </ul>
        </details>
      </td>
    </tr>`;
  }

  override render() {
    return html`
      <h2>Vault Forwarding</h2>
      <p>
        The endpoints enabled for forwarding in this merchant account. Stored authentication methods (signed requests,
        mutual TLS, encrypted payloads) are set per endpoint under “Edit authentication methods”.
      </p>
      ${problemAlert(this.error)}
      ${
        this.editing
          ? this.form()
          : html`<button type="button" @click=${() => ((this.editing = 'new'), (this.formError = null))}>
              Add forwarding config
            </button>`
      }
      ${
        this.page
          ? html`${dataTable({
              caption: 'Forwarding configs',
              captionHidden: true,
              className: 'configs',
              columns: ['Name', 'Hosts', 'Methods', 'Status', 'Bodies', { hidden: 'Actions' }],
              items: this.page.items,
              row: (c) => this.row(c),
              empty: 'No endpoints enabled yet.',
            })}
            ${pager('Forwarding configs', this.page, (c) => void this.load(c))}`
          : this.error
            ? nothing
            : html`<p>Loading…</p>`
      }
    `;
  }
}
customElements.define('vf-forwarding-configs', VfForwardingConfigs);
