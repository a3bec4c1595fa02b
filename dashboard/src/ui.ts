import { html, LitElement, nothing, TemplateResult } from 'lit';
import { ApiError, Page } from './api';

/**
 * Every view renders into the light DOM: labels, ids and the one stylesheet (styles.css, a file
 * served under the CSP's style-src 'self') work across components.
 */
export class View extends LitElement {
  protected override createRenderRoot(): HTMLElement {
    return this;
  }
}

let ids = 0;
/** A document-unique id for label/aria wiring. */
export function uid(prefix: string): string {
  return `${prefix}-${++ids}`;
}

/** The problem's messages for one field, right under it, announced and tied to the input. */
export function fieldError(error: ApiError | null, name: string, id: string): TemplateResult | typeof nothing {
  const messages = error?.fieldMessages(name) ?? [];
  return messages.length === 0 ? nothing : fieldMessage(id, messages.join('; '), name);
}

/** A message under a field (`id` for its aria-describedby), or nothing without one. */
export function fieldMessage(id: string, text: string | null, field?: string): TemplateResult | typeof nothing {
  if (!text) return nothing;
  return html`<p class="field-error" id=${id} data-field=${field ?? nothing}>
    <span aria-hidden="true">⚠ </span>${text}
  </p>`;
}

export function describedBy(...ids: Array<string | number | false | null | undefined>): string {
  return ids.filter(Boolean).join(' ');
}

/** The problem's detail as a general alert (the field messages appear beside the fields). */
export function problemAlert(error: ApiError | Error | null): TemplateResult | typeof nothing {
  if (!error) return nothing;
  const detail = error instanceof ApiError ? error.problem.detail || error.problem.title : error.message;
  const code =
    error instanceof ApiError && error.problem.code
      ? html` <span class="code">(${error.problem.code})</span>`
      : nothing;
  return html`<div class="alert error" role="alert"><strong>Error:</strong> ${detail}${code}</div>`;
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** Status as a word and a symbol, never by colour alone. */
export function statusBadge(kind: 'ok' | 'bad' | 'neutral' | 'busy', text: string): TemplateResult {
  const symbol = { ok: '✓', bad: '✕', neutral: '•', busy: '↻' }[kind];
  return html`<span class="badge ${kind}"><span aria-hidden="true">${symbol} </span>${text}</span>`;
}

/** A column heading; `{ hidden }` is read by screen readers only (an actions column). */
export type Column = string | { hidden: string };

/**
 * A list as a table: its headings, a row (or more) per item, and when there are none one row saying
 * so across every column. `captionHidden` keeps the caption for screen readers only.
 */
export function dataTable<T>(options: {
  caption?: unknown;
  captionHidden?: boolean;
  className?: string;
  columns: Column[];
  items: readonly T[];
  row: (item: T) => unknown;
  empty: unknown;
}): TemplateResult {
  const { caption, columns, items } = options;
  return html`<table class=${options.className ?? nothing}>
    ${
      caption === undefined
        ? nothing
        : html`<caption class=${options.captionHidden ? 'visually-hidden' : nothing}>
            ${caption}
          </caption>`
    }
    <thead>
      <tr>
        ${columns.map(
          (column) =>
            html`<th scope="col">
              ${typeof column === 'string' ? column : html`<span class="visually-hidden">${column.hidden}</span>`}
            </th>`,
        )}
      </tr>
    </thead>
    <tbody>
      ${items.map(options.row)}
      ${
        items.length === 0
          ? html`<tr>
              <td colspan=${columns.length}>${options.empty}</td>
            </tr>`
          : nothing
      }
    </tbody>
  </table>`;
}

/** The shared next/previous cursors of every list: one page at a time. */
export function pager(
  label: string,
  page: { previous_cursor: string | null; next_cursor: string | null } | null,
  go: (cursor: string) => void,
): TemplateResult {
  return html`<nav class="pager" aria-label=${`${label} pages`}>
    <button
      type="button"
      ?disabled=${!page?.previous_cursor}
      @click=${() => page?.previous_cursor && go(page.previous_cursor)}
    >
      ← Previous
    </button>
    <button type="button" ?disabled=${!page?.next_cursor} @click=${() => page?.next_cursor && go(page.next_cursor)}>
      Next →
    </button>
  </nav>`;
}

/**
 * A list walked one page at a time with the API's cursors, for the merchant account `merchant` (null: the
 * key's own): what Buyers and Stored cards share. `fetch` asks for one page; `pageNumber` only tells the
 * user where they are.
 */
export abstract class PagedView<Item> extends View {
  static override properties = {
    merchant: {},
    page: { state: true },
    error: { state: true },
    pageNumber: { state: true },
  };
  declare merchant: string | null;
  declare page: Page<Item> | null;
  declare error: ApiError | null;
  declare pageNumber: number;

  constructor() {
    super();
    this.merchant = null;
    this.page = null;
    this.error = null;
    this.pageNumber = 1;
  }

  /** One page: the first without a cursor. */
  protected abstract fetch(cursor?: string): Promise<Page<Item>>;

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('merchant')) void this.load();
  }

  /** Loads the page at `cursor` (the first without one), `step` pages away from the one on screen. */
  protected async load(cursor?: string, step = 0): Promise<void> {
    try {
      this.page = await this.fetch(cursor);
      this.pageNumber = cursor ? this.pageNumber + step : 1;
      this.error = null;
    } catch (error) {
      this.error = error as ApiError;
    }
  }

  /** The next/previous buttons of this list. */
  protected pages(label: string): TemplateResult {
    return pager(label, this.page, (c) => void this.load(c, c === this.page?.next_cursor ? 1 : -1));
  }
}

export function announce(text: string): void {
  const region = document.getElementById('announcer');
  if (!region) return;
  region.textContent = '';
  // A new text node after a tick is announced even when the text repeats.
  setTimeout(() => (region.textContent = text), 50);
}

/** Copies text; if the clipboard is not available, selects it so the keyboard copy works. */
export async function copyText(text: string, fallback: HTMLElement | null): Promise<string> {
  try {
    await navigator.clipboard.writeText(text);
    return 'Copied to the clipboard.';
  } catch {
    if (fallback) {
      const range = document.createRange();
      range.selectNodeContents(fallback);
      const selection = getSelection();
      selection?.removeAllRanges();
      selection?.addRange(range);
    }
    return 'Selected: press Ctrl+C (⌘C) to copy.';
  }
}

/** Where a merchant's settings live: Settings → Merchants → id, or Settings → Configuration for a merchant key. */
export function merchantBase(merchant: string | null): string {
  return merchant ? `#/merchants/${encodeURIComponent(merchant)}` : '#/configuration';
}

/** A text field of a submitted form ('' when absent): the forms here have no file inputs under these names. */
export function formText(data: FormData, name: string): string {
  const value = data.get(name);
  return typeof value === 'string' ? value : '';
}
