import { html } from 'lit';
import { api, ApiError, Page } from '../api';
import { dataTable, formatTime, pager, problemAlert, View } from '../ui';

export interface MerchantAccount {
  id: string;
  display_name: string;
  /** Web origins whose pages may embed this merchant's Secure Fields (decision 0140). */
  secure_fields_origins: string[];
  created_at: string;
  updated_at: string;
}

/** Settings → Merchants: one page of merchant accounts at a time. */
export class VfMerchants extends View {
  static override properties = { page: { state: true }, error: { state: true } };
  declare page: Page<MerchantAccount> | null;
  declare error: ApiError | null;

  constructor() {
    super();
    this.page = null;
    this.error = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(cursor?: string): Promise<void> {
    try {
      this.page = await api<Page<MerchantAccount>>('/merchant-accounts', { query: { limit: 20, cursor } });
      this.error = null;
    } catch (error) {
      this.error = error as ApiError;
    }
  }

  override render() {
    return html`
      <p class="breadcrumb">Settings</p>
      <h1>Merchants</h1>
      ${problemAlert(this.error)}
      ${
        this.page
          ? html`${dataTable({
              caption: 'Merchant accounts',
              captionHidden: true,
              columns: ['Name', 'ID', 'Created', { hidden: 'Actions' }],
              items: this.page.items,
              row: (m) =>
                html`<tr>
                  <td>${m.display_name}</td>
                  <td><code>${m.id}</code></td>
                  <td>${formatTime(m.created_at)}</td>
                  <td>
                    <a
                      class="button"
                      href=${`#/merchants/${encodeURIComponent(m.id)}`}
                      aria-label=${`Edit ${m.display_name}`}
                      >Edit</a
                    >
                  </td>
                </tr>`,
              empty: html`No merchant accounts yet: <code>npm run cli -- merchant create</code>.`,
            })}
            ${pager('Merchant accounts', this.page, (c) => void this.load(c))}`
          : html`<p>Loading…</p>`
      }
    `;
  }
}
customElements.define('vf-merchants', VfMerchants);
