import { html, nothing } from 'lit';
import { api, ApiError, Page } from '../api';
import { dataTable, formatTime, pager, problemAlert, View } from '../ui';

interface Buyer {
  id: string;
  display_name: string;
  external_identifier: string | null;
  created_at: string;
}

/** Buyers: search, and the shared next/previous cursors, one page at a time. */
export class VfBuyers extends View {
  static override properties = {
    merchant: {},
    page: { state: true },
    error: { state: true },
    search: { state: true },
    shownSearch: { state: true },
    pageNumber: { state: true },
  };
  declare merchant: string | null;
  declare page: Page<Buyer> | null;
  declare error: ApiError | null;
  declare search: string;
  /** The search the page on screen was loaded with (its cursors carry it on): what the caption names. */
  declare shownSearch: string;
  /** Only to tell the user where they are; the cursors do the work. */
  declare pageNumber: number;

  constructor() {
    super();
    this.merchant = null;
    this.page = null;
    this.error = null;
    this.search = '';
    this.shownSearch = '';
    this.pageNumber = 1;
  }

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('merchant')) void this.load();
  }

  private async load(cursor?: string, step = 0): Promise<void> {
    const search = cursor ? this.shownSearch : this.search;
    try {
      this.page = await api<Page<Buyer>>('/buyers', {
        merchant: this.merchant,
        query: { limit: 10, cursor, search: cursor ? undefined : search },
      });
      this.shownSearch = search;
      this.pageNumber = cursor ? this.pageNumber + step : 1;
      this.error = null;
    } catch (error) {
      this.error = error as ApiError;
    }
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
            ${pager('Buyers', this.page, (c) => void this.load(c, c === this.page?.next_cursor ? 1 : -1))}`
          : e
            ? nothing
            : html`<p>Loading…</p>`
      }
    `;
  }
}
customElements.define('vf-buyers', VfBuyers);
