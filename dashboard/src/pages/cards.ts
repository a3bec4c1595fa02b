import { html, nothing } from 'lit';
import { api, Page } from '../api';
import { dataTable, formatTime, PagedView, problemAlert } from '../ui';

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
export class VfCards extends PagedView<StoredCard> {
  protected fetch(cursor?: string): Promise<Page<StoredCard>> {
    return api<Page<StoredCard>>('/payment-methods', { merchant: this.merchant, query: { limit: 10, cursor } });
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
            ${this.pages('Stored cards')}`
          : e
            ? nothing
            : html`<p>Loading…</p>`
      }
    `;
  }
}
customElements.define('vf-cards', VfCards);
