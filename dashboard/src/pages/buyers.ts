import { html, nothing } from 'lit';
import { api, Page } from '../api';
import { dataTable, formatTime, PagedView, problemAlert } from '../ui';

interface Buyer {
  id: string;
  display_name: string;
  external_identifier: string | null;
  created_at: string;
}

/** Buyers: search, and the shared next/previous cursors, one page at a time. */
export class VfBuyers extends PagedView<Buyer> {
  static override properties = {
    ...PagedView.properties,
    search: { state: true },
    shownSearch: { state: true },
  };
  declare search: string;
  /** The search the page on screen was loaded with (its cursors carry it on): what the caption names. */
  declare shownSearch: string;

  constructor() {
    super();
    this.search = '';
    this.shownSearch = '';
  }

  protected async fetch(cursor?: string): Promise<Page<Buyer>> {
    const search = cursor ? this.shownSearch : this.search;
    const page = await api<Page<Buyer>>('/buyers', {
      merchant: this.merchant,
      query: { limit: 10, cursor, search: cursor ? undefined : search },
    });
    this.shownSearch = search;
    return page;
  }

  private submit(event: SubmitEvent): void {
    event.preventDefault();
    this.search = ((event.target as HTMLFormElement).elements.namedItem('search') as HTMLInputElement).value;
    void this.load();
  }

  override render() {
    const e = this.error;
    return html`
      <h1>Buyers</h1>
      <form class="search" role="search" @submit=${this.submit}>
        <label for="buyer-search">Search by name or external identifier</label>
        <input
          id="buyer-search"
          name="search"
          type="search"
          maxlength="200"
          .value=${this.search}
          aria-invalid=${e?.fieldMessages('search').length ? 'true' : 'false'}
          aria-describedby=${e?.fieldMessages('search').length ? 'buyer-search-error' : nothing}
        />
        <button type="submit">Search</button>
      </form>
      ${
        e?.fieldMessages('search').length
          ? html`<p class="field-error" id="buyer-search-error">${e.fieldMessages('search').join('; ')}</p>`
          : problemAlert(e)
      }
      ${
        this.page
          ? html`${dataTable({
              caption: html`Page
              ${this.pageNumber}${this.shownSearch ? html` · matching “${this.shownSearch}”` : nothing}`,
              columns: ['Name', 'External identifier', 'Created', 'ID'],
              items: this.page.items,
              row: (b) =>
                html`<tr>
                  <td>${b.display_name}</td>
                  <td>${b.external_identifier ?? '—'}</td>
                  <td>${formatTime(b.created_at)}</td>
                  <td><code>${b.id}</code></td>
                </tr>`,
              empty: 'No buyers found.',
            })}
            ${this.pages('Buyers')}`
          : e
            ? nothing
            : html`<p>Loading…</p>`
      }
    `;
  }
}
customElements.define('vf-buyers', VfBuyers);
