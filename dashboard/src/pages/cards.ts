import { html, nothing } from 'lit';
import { api, ApiError, Page } from '../api';
import { dataTable, formatTime, pager, problemAlert, View } from '../ui';

/** A stored card as the API lists it: never its number, only what identifies it to a person. */
interface StoredCard {
  id: string;
  scheme: string;
  label: string;
  expiration_date: string;
  buyer: { display_name: string; external_identifier: string | null } | null;
  created_at: string;
}

/** Stored cards: a merchant's first question ("what is in the vault?"), newest first, one page at a time. */
export class VfCards extends View {
  static override properties = {
    merchant: {},
    page: { state: true },
    error: { state: true },
    pageNumber: { state: true },
  };
  declare merchant: string | null;
  declare page: Page<StoredCard> | null;
  declare error: ApiError | null;
  /** Only to tell the user where they are; the cursors do the work. */
  declare pageNumber: number;

  constructor() {
    super();
    this.merchant = null;
    this.page = null;
    this.error = null;
    this.pageNumber = 1;
  }

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('merchant')) void this.load();
  }

  private async load(cursor?: string, step = 0): Promise<void> {
    try {
      this.page = await api<Page<StoredCard>>('/payment-methods', {
        merchant: this.merchant,
        query: { limit: 10, cursor },
      });
      this.pageNumber = cursor ? this.pageNumber + step : 1;
      this.error = null;
    } catch (error) {
      this.error = error as ApiError;
    }
  }

  override render() {
    const e = this.error;
    return html`
      <h1>Stored cards</h1>
      <p>The cards in the vault, newest first. Numbers never leave it: each card shows its scheme and last four.</p>
      ${problemAlert(e)}
      ${
        this.page
          ? html`${dataTable({
              caption: html`Page ${this.pageNumber}`,
              columns: ['Card', 'Scheme', 'Expiry', 'Buyer', 'Created', 'ID'],
              items: this.page.items,
              row: (c) =>
                html`<tr>
                  <td>•••• ${c.label}</td>
                  <td>${c.scheme}</td>
                  <td>${c.expiration_date}</td>
                  <td>${c.buyer ? (c.buyer.external_identifier ?? c.buyer.display_name) : '—'}</td>
                  <td>${formatTime(c.created_at)}</td>
                  <td><code>${c.id}</code></td>
                </tr>`,
              empty: 'No cards stored yet.',
            })}
            ${pager('Stored cards', this.page, (c) => void this.load(c, c === this.page?.next_cursor ? 1 : -1))}`
          : e
            ? nothing
            : html`<p>Loading…</p>`
      }
    `;
  }
}
customElements.define('vf-cards', VfCards);
