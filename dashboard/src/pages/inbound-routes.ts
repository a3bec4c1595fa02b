import { html, nothing } from 'lit';
import { api, ApiError, Page } from '../api';
import { announce, dataTable, fieldError, formatTime, formText, PagedView, problemAlert } from '../ui';
import { recordBodiesText } from './forwarding-configs';

/** An inbound route as the API answers it: never its secret. */
interface InboundRoute {
  id: string;
  display_name: string;
  entry_path: string;
  upstream_url: string;
  methods: string[];
  caller_authentication: { kind: string; scheme?: string; header?: string };
  upstream_headers: Array<{ name: string }>;
  record_bodies: boolean;
  record_bodies_retention_days: number;
  created_at: string;
}

type Kind = 'shared-secret' | 'standard-webhooks' | 'hmac-sha256' | 'none';

/** The caller_authentication a form asks for (mutual-tls, which needs a PEM bundle, is the API's and the CLI's). */
function callerAuthentication(data: FormData, kind: Kind): Record<string, unknown> {
  const secret = formText(data, 'secret');
  const header = formText(data, 'header');
  if (kind === 'shared-secret') return { kind, header, secret };
  if (kind === 'hmac-sha256') return { kind: 'hmac', scheme: kind, header, secret };
  if (kind === 'standard-webhooks') return { kind: 'hmac', scheme: kind, secret };
  return {
    kind,
    rate_limit: { requests: Number(formText(data, 'requests')), per_seconds: Number(formText(data, 'per-seconds')) },
  };
}

/** `Name: value` lines as upstream_headers (the API checks them); a line without a colon is a name with no value. */
function upstreamHeaders(text: string): Array<{ name: string; value: string }> {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const colon = line.indexOf(':');
      return colon < 0
        ? { name: line.trim(), value: '' }
        : { name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() };
    });
}

/**
 * Inbound routes (docs/inbound-routes.md): where a merchant's partners send card data, stored on the way and
 * replaced by ids before the request reaches the merchant's upstream. List, create, delete.
 */
export class VfInboundRoutes extends PagedView<InboundRoute> {
  static override properties = { ...PagedView.properties, kind: { state: true }, formError: { state: true } };
  declare kind: Kind;
  declare formError: ApiError | null;

  constructor() {
    super();
    this.kind = 'shared-secret';
    this.formError = null;
  }

  protected fetch(cursor?: string): Promise<Page<InboundRoute>> {
    return api<Page<InboundRoute>>('/vault-forward/inbound-routes', {
      merchant: this.merchant,
      query: { limit: 10, cursor },
    });
  }

  private async create(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const data = new FormData(form);
    try {
      const created = await api<InboundRoute>('/vault-forward/inbound-routes', {
        method: 'POST',
        merchant: this.merchant,
        body: {
          display_name: formText(data, 'display-name'),
          upstream_url: formText(data, 'upstream-url'),
          caller_authentication: callerAuthentication(data, this.kind),
          upstream_headers: upstreamHeaders(formText(data, 'upstream-headers')),
          record_bodies: data.get('record-bodies') === 'on',
          record_bodies_retention_days: Number(formText(data, 'record-bodies-days')),
        },
      });
      this.formError = null;
      form.reset();
      announce(`Inbound route ${created.display_name} created: partners send to ${created.entry_path}.`);
      await this.load();
    } catch (error) {
      this.formError = error as ApiError;
    }
  }

  private async deleteRoute(route: InboundRoute): Promise<void> {
    if (!confirm(`Delete the inbound route ${route.display_name}? Its partners' requests will be refused.`)) return;
    try {
      await api(`/vault-forward/inbound-routes/${route.id}`, { method: 'DELETE', merchant: this.merchant });
      announce(`Inbound route ${route.display_name} deleted.`);
      await this.load();
    } catch (error) {
      this.error = error as ApiError;
    }
  }

  private caller(route: InboundRoute): string {
    const c = route.caller_authentication;
    return [c.scheme ?? c.kind, c.header].filter(Boolean).join(' · ');
  }

  override render() {
    const e = this.error;
    const f = this.formError;
    const needsHeader = this.kind === 'shared-secret' || this.kind === 'hmac-sha256';
    return html`
      <h1>Inbound routes</h1>
      <p>
        Partners send card data to a route’s entry path; each card is stored in the vault and replaced by its id before
        the request reaches your upstream, signed with your webhook secret.
      </p>
      ${problemAlert(e)}
      ${
        this.page
          ? html`${dataTable({
              caption: html`Page ${this.pageNumber}`,
              columns: [
                'Name',
                'Entry path',
                'Upstream',
                'Callers',
                'Upstream headers',
                'Bodies',
                'Created',
                { hidden: 'Actions' },
              ],
              items: this.page.items,
              row: (r) =>
                html`<tr>
                  <td>${r.display_name}</td>
                  <td><code>${r.entry_path}</code></td>
                  <td>${r.upstream_url}</td>
                  <td>${this.caller(r)}</td>
                  <td>${r.upstream_headers.map((h) => h.name).join(', ') || '—'}</td>
                  <td>${recordBodiesText(r)}</td>
                  <td>${formatTime(r.created_at)}</td>
                  <td><button type="button" class="link" @click=${() => void this.deleteRoute(r)}>Delete</button></td>
                </tr>`,
              empty: 'No inbound routes yet.',
            })}
            ${this.pages('Inbound routes')}`
          : e
            ? nothing
            : html`<p>Loading…</p>`
      }
      <h2>New inbound route</h2>
      <form @submit=${(event: SubmitEvent) => void this.create(event)}>
        ${problemAlert(f)}
        <label for="inbound-name">Name</label>
        <input id="inbound-name" name="display-name" required maxlength="200" />
        ${fieldError(f, 'display_name', 'inbound-name-error')}
        <label for="inbound-upstream">Upstream URL (https)</label>
        <input id="inbound-upstream" name="upstream-url" type="url" required />
        ${fieldError(f, 'upstream_url', 'inbound-upstream-error')}
        <label for="inbound-kind">Callers prove themselves with</label>
        <select
          id="inbound-kind"
          @change=${(event: Event) => (this.kind = (event.target as HTMLSelectElement).value as Kind)}
        >
          <option value="shared-secret">a secret in a header</option>
          <option value="hmac-sha256">an HMAC-SHA256 of the body in a header</option>
          <option value="standard-webhooks">a Standard Webhooks signature</option>
          <option value="none">nothing (rate limited)</option>
        </select>
        ${
          needsHeader
            ? html`<label for="inbound-header">Header</label><input id="inbound-header" name="header" required />`
            : nothing
        }
        ${
          this.kind === 'none'
            ? html`<label for="inbound-requests">Requests</label>
                <input id="inbound-requests" name="requests" type="number" min="1" required />
                <label for="inbound-seconds">per seconds</label>
                <input id="inbound-seconds" name="per-seconds" type="number" min="1" required />`
            : html`<label for="inbound-secret">Secret (16 bytes or more; never shown again)</label>
                <input id="inbound-secret" name="secret" type="password" required autocomplete="off" />`
        }
        ${fieldError(f, 'caller_authentication', 'inbound-caller-error')}
        <label for="inbound-upstream-headers"
          >Upstream headers (one “Name: value” a line; values never shown again)</label
        >
        <textarea id="inbound-upstream-headers" name="upstream-headers" rows="2" autocomplete="off"></textarea>
        ${fieldError(f, 'upstream_headers', 'inbound-upstream-headers-error')}
        <label class="inline"
          ><input type="checkbox" name="record-bodies" /> Record bodies (for debugging an integration)</label
        >
        <label for="inbound-bodies-days">Keep them (days, 1–30)</label>
        <input id="inbound-bodies-days" name="record-bodies-days" type="number" min="1" max="30" value="7" required />
        ${fieldError(f, 'record_bodies_retention_days', 'inbound-bodies-days-error')}
        <button type="submit">Create</button>
      </form>
    `;
  }
}
customElements.define('vf-inbound-routes', VfInboundRoutes);
