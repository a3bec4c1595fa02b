import { html, nothing } from 'lit';
import { api, ApiError, currentSession } from '../api';
import { announce, describedBy, fieldError, formatTime, merchantBase, problemAlert, View } from '../ui';
import type { MerchantAccount } from './merchants';
import './forwarding-configs';

/**
 * Edit a merchant: Settings → Merchants → (merchant) with an instance key, or Settings →
 * Configuration for a merchant-bound key (merchant = null: the key's own account), with the
 * General and Vault Forwarding tabs.
 */
export class VfMerchant extends View {
  static override properties = {
    merchant: {},
    tab: {},
    account: { state: true },
    error: { state: true },
    saveError: { state: true },
  };
  declare merchant: string | null;
  declare tab: 'general' | 'vault-forwarding';
  declare account: MerchantAccount | null;
  declare error: ApiError | null;
  declare saveError: ApiError | null;

  constructor() {
    super();
    this.merchant = null;
    this.tab = 'general';
    this.account = null;
    this.error = null;
    this.saveError = null;
  }

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('merchant')) {
      this.account = null;
      if (this.merchant) void this.load();
    }
  }

  private async load(): Promise<void> {
    try {
      this.account = await api<MerchantAccount>(`/merchant-accounts/${encodeURIComponent(this.merchant!)}`);
      this.error = null;
    } catch (error) {
      this.error = error as ApiError;
    }
  }

  private async save(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const elements = (event.target as HTMLFormElement).elements;
    const name = (elements.namedItem('display_name') as HTMLInputElement).value;
    const origins = (elements.namedItem('secure_fields_origins') as HTMLTextAreaElement).value
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    try {
      this.account = await api<MerchantAccount>(`/merchant-accounts/${encodeURIComponent(this.merchant!)}`, {
        method: 'PUT',
        body: { display_name: name, secure_fields_origins: origins },
      });
      this.saveError = null;
      announce('Merchant saved.');
    } catch (error) {
      this.saveError = error as ApiError;
    }
  }

  private general() {
    if (!this.merchant) {
      const own = currentSession()?.ownMerchantId;
      return html`<p>
        This key acts for the merchant account ${own ? html`<code>${own}</code>` : 'it belongs to'}. Merchant accounts
        are managed with an instance key.
      </p>`;
    }
    if (!this.account) return this.error ? nothing : html`<p>Loading…</p>`;
    const e = this.saveError;
    return html`<form class="card narrow" @submit=${this.save}>
      <label for="merchant-id">ID</label>
      <input id="merchant-id" .value=${this.account.id} readonly />
      <label for="merchant-name">Display name</label>
      <input
        id="merchant-name"
        name="display_name"
        required
        maxlength="200"
        .value=${this.account.display_name}
        aria-invalid=${e?.fieldMessages('display_name').length ? 'true' : 'false'}
        aria-describedby=${describedBy(e?.fieldMessages('display_name').length && 'merchant-name-error')}
      />
      ${fieldError(e, 'display_name', 'merchant-name-error')}
      <label for="merchant-origins">Secure Fields origins</label>
      <textarea
        id="merchant-origins"
        name="secure_fields_origins"
        rows="3"
        .value=${this.account.secure_fields_origins.join('\n')}
        aria-invalid=${e?.fieldMessages('secure_fields_origins').length ? 'true' : 'false'}
        aria-describedby=${describedBy(
          'merchant-origins-help',
          e?.fieldMessages('secure_fields_origins').length && 'merchant-origins-error',
        )}
      ></textarea>
      <p class="help" id="merchant-origins-help">
        One per line: the web origins of the pages that may embed this merchant’s card fields, such as
        <code>https://shop.example.com</code> (<code>http</code> only for <code>localhost</code>); no path. At most 20.
      </p>
      ${fieldError(e, 'secure_fields_origins', 'merchant-origins-error')}
      ${e && e.hasErrorsBeyond(['display_name', 'secure_fields_origins']) ? problemAlert(e) : nothing}
      <p class="help">
        Created ${formatTime(this.account.created_at)}, updated ${formatTime(this.account.updated_at)}.
      </p>
      <button type="submit">Save</button>
    </form>`;
  }

  override render() {
    const base = merchantBase(this.merchant);
    const title = this.merchant ? (this.account?.display_name ?? this.merchant) : 'Configuration';
    return html`
      <p class="breadcrumb">
        Settings → ${this.merchant ? html`<a href="#/merchants">Merchants</a> → Edit merchant` : 'Configuration'}
      </p>
      <h1>${title}</h1>
      ${problemAlert(this.error)}
      <nav class="tabs" aria-label="Merchant settings">
        <a href=${base} aria-current=${this.tab === 'general' ? 'page' : nothing}>General</a>
        <a href=${`${base}/vault-forwarding`} aria-current=${this.tab === 'vault-forwarding' ? 'page' : nothing}
          >Vault Forwarding</a
        >
      </nav>
      <section class="tab-panel" aria-label=${this.tab === 'general' ? 'General' : 'Vault Forwarding'}>
        ${this.tab === 'general' ? this.general() : html`<vf-forwarding-configs .merchant=${this.merchant}></vf-forwarding-configs>`}
      </section>
    `;
  }
}
customElements.define('vf-merchant', VfMerchant);
