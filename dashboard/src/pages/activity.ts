import { html, nothing, svg } from 'lit';
import { api, ApiError, Page } from '../api';
import { dataTable, formatTime, pager, problemAlert, statusBadge, View } from '../ui';

interface ForwardRecord {
  id: string;
  method: string | null;
  target_url: string | null;
  status: number | null;
  duration_ms: number;
  error_type: string | null;
  merchant_initiated: boolean;
  created_at: string;
}

/** GET /vault-forward/requests/{id}: the record with its redacted bodies (decision 0104), when its config asked (0138). */
interface ForwardRecordDetail extends ForwardRecord {
  bodies_recorded: boolean;
  bodies_kept_until: string | null;
  request_headers: Record<string, string> | null;
  request_body: string | null;
  request_body_truncated: boolean;
  response_body: string | null;
  response_body_truncated: boolean;
}

/** The records table's columns; a record's bodies open in a row across all of them. */
const RECORD_COLUMNS = ['Time', 'Outcome', 'Target', 'Duration', 'Request id', 'Bodies'];

interface Attempt {
  number: number;
  request_id: string;
  started_at: string;
  duration_ms: number | null;
  status: number | null;
  error_type: string | null;
  next_attempt_at: string | null;
}

interface Job {
  id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  target: { method: string; url: string };
  max_attempts: number;
  attempts: Attempt[];
  created_at: string;
  finished_at: string | null;
}

interface ActivityMinute {
  minute: string;
  succeeded: number;
  downstream_error: number;
  failed: number;
  pending: number;
}

const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
/** The jobs table's columns; a job's attempts open in a row across all of them. */
const JOB_COLUMNS = ['Created', 'Status', 'Target', 'Attempts', 'Finished', 'ID'];
const OUTCOMES = [
  { key: 'succeeded', label: 'Succeeded (downstream < 400)' },
  { key: 'downstream_error', label: 'Downstream error (≥ 400)' },
  { key: 'failed', label: 'Failed (service error)' },
  { key: 'pending', label: 'No outcome yet' },
] as const;
const REFRESH_MS = 2_000;

function jobBadge(status: Job['status']) {
  const kind =
    status === 'succeeded'
      ? 'ok'
      : status === 'failed'
        ? 'bad'
        : status === 'running' || status === 'queued'
          ? 'busy'
          : 'neutral';
  return statusBadge(kind, status);
}

function attemptBadge(a: Attempt) {
  if (a.error_type) return statusBadge('bad', `${a.status ?? ''} ${a.error_type}`.trim());
  if (a.status === null) return statusBadge('busy', 'running');
  return statusBadge(a.status < 400 ? 'ok' : 'bad', `HTTP ${a.status}`);
}

function recordBadge(r: ForwardRecord) {
  if (r.error_type) return statusBadge('bad', `${r.status ?? ''} ${r.error_type}`.trim());
  if (r.status === null) return statusBadge('busy', 'pending');
  return statusBadge(r.status < 400 ? 'ok' : 'bad', String(r.status));
}

/**
 * Activity: the last hour's forwards per minute by outcome (GET /vault-forward/activity), the forward
 * records and the queued jobs with their attempts, one page each; refreshed every 2 s while a job
 * on the page is queued or running.
 */
export class VfActivity extends View {
  static override properties = {
    merchant: {},
    stats: { state: true },
    records: { state: true },
    jobs: { state: true },
    status: { state: true },
    open: { state: true },
    details: { state: true },
    error: { state: true },
    refreshing: { state: true },
  };
  declare merchant: string | null;
  declare stats: ActivityMinute[] | null;
  declare records: Page<ForwardRecord> | null;
  declare jobs: Page<Job> | null;
  declare status: string;
  declare open: ReadonlySet<string>;
  /** Records whose bodies are open: loaded, or the error that kept them. */
  declare details: ReadonlyMap<string, ForwardRecordDetail | ApiError | null>;
  declare error: ApiError | null;
  declare refreshing: boolean;
  private recordCursor: string | undefined;
  private jobCursor: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    super();
    this.merchant = null;
    this.stats = null;
    this.records = null;
    this.jobs = null;
    this.status = '';
    this.open = new Set();
    this.details = new Map();
    this.error = null;
    this.refreshing = false;
  }

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('merchant')) void this.refresh();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.timer);
  }

  private async refresh(): Promise<void> {
    clearTimeout(this.timer);
    try {
      const [stats, records, jobs] = await Promise.all([
        api<{ minutes: ActivityMinute[] }>('/vault-forward/activity', {
          merchant: this.merchant,
          query: { minutes: 60 },
        }),
        api<Page<ForwardRecord>>('/vault-forward/requests', {
          merchant: this.merchant,
          query: { limit: 10, cursor: this.recordCursor },
        }),
        api<Page<Job>>('/vault-forward/jobs', {
          merchant: this.merchant,
          query: { limit: 10, cursor: this.jobCursor, status: this.status || undefined },
        }),
      ]);
      this.stats = stats.minutes;
      this.records = records;
      this.jobs = jobs;
      this.error = null;
    } catch (error) {
      this.error = error as ApiError;
    }
    this.refreshing = !!this.jobs?.items.some((j) => j.status === 'queued' || j.status === 'running');
    if (this.refreshing && this.isConnected) this.timer = setTimeout(() => void this.refresh(), REFRESH_MS);
  }

  private toggle(id: string): void {
    const open = new Set(this.open);
    if (!open.delete(id)) open.add(id);
    this.open = open;
  }

  /** Opens (loading it) or closes a record's redacted request and answer. */
  private async toggleRecord(id: string): Promise<void> {
    const details = new Map(this.details);
    if (details.delete(id)) {
      this.details = details;
      return;
    }
    details.set(id, null);
    this.details = details;
    let detail: ForwardRecordDetail | ApiError;
    try {
      detail = await api<ForwardRecordDetail>(`/vault-forward/requests/${encodeURIComponent(id)}`, {
        merchant: this.merchant,
      });
    } catch (error) {
      detail = error as ApiError;
    }
    if (this.details.has(id)) this.details = new Map(this.details).set(id, detail);
  }

  private recordDetail(id: string) {
    const detail = this.details.get(id);
    const body = (title: string, text: string | null, truncated: boolean) =>
      html`<h3>${title}</h3>
        ${text === null ? html`<p>None kept.</p>` : html`<pre class="record-body">${text}</pre>`}
        ${truncated ? html`<p class="note">Cut at 64 KiB.</p>` : nothing}`;
    return html`<tr class="record-detail">
      <td colspan=${RECORD_COLUMNS.length} data-testid=${`record-detail-${id}`}>
        ${
          detail === null || detail === undefined
            ? html`<p>Loading…</p>`
            : detail instanceof ApiError
              ? problemAlert(detail)
              : !detail.bodies_recorded
                ? html`<p>Bodies not recorded: this forward’s config does not record them (“Record bodies”).</p>`
                : detail.request_headers === null && detail.response_body === null
                  ? html`<p>
                      Bodies recorded, erased at the end of their retention
                      (${detail.bodies_kept_until ? formatTime(detail.bodies_kept_until) : 'unknown'}).
                    </p>`
                  : html`<p class="note">
                        Bodies recorded because this forward’s config asks for them; kept until
                        ${detail.bodies_kept_until ? formatTime(detail.bodies_kept_until) : 'the purge'}.
                      </p>
                      <p class="note">
                        Placeholder text stands where card data or secrets were filled in; secret headers are redacted.
                      </p>
                      <h3>Request headers</h3>
                      <pre class="record-body">
${Object.entries(detail.request_headers ?? {})
                          .map(([name, value]) => `${name}: ${value}`)
                          .join('\n')}</pre>
                      ${body('Request body (as sent)', detail.request_body, detail.request_body_truncated)}
                      ${body('Answer (after response rules)', detail.response_body, detail.response_body_truncated)}`
        }
      </td>
    </tr>`;
  }

  private chart() {
    const minutes = this.stats ?? [];
    const width = 720;
    const height = 180;
    const left = 40;
    const bottom = 24;
    const plotW = width - left - 10;
    const plotH = height - bottom - 10;
    const total = (m: ActivityMinute) => m.succeeded + m.downstream_error + m.failed + m.pending;
    const max = Math.max(1, ...minutes.map(total));
    const barW = plotW / Math.max(1, minutes.length);
    const sums = OUTCOMES.map((o) => minutes.reduce((s, m) => s + m[o.key], 0));
    return html`<figure class="chart">
      <figcaption id="chart-title">Forwards per minute, last hour, by outcome</figcaption>
      <svg
        viewBox=${`0 0 ${width} ${height}`}
        role="img"
        aria-labelledby="chart-title chart-summary"
        data-testid="activity-chart"
      >
        <defs>
          <pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
            <rect width="6" height="6" class="o-downstream_error"></rect>
            <line x1="0" y1="0" x2="0" y2="6" class="hatch-line"></line>
          </pattern>
          <pattern id="dots" width="5" height="5" patternUnits="userSpaceOnUse">
            <rect width="5" height="5" class="o-failed"></rect>
            <circle cx="2.5" cy="2.5" r="1.2" class="dot"></circle>
          </pattern>
        </defs>
        <line x1=${left} y1=${10} x2=${left} y2=${10 + plotH} class="axis"></line>
        <line x1=${left} y1=${10 + plotH} x2=${left + plotW} y2=${10 + plotH} class="axis"></line>
        <text x=${left - 4} y=${14} class="tick" text-anchor="end">${max}</text>
        <text x=${left - 4} y=${10 + plotH} class="tick" text-anchor="end">0</text>
        <text x=${left} y=${height - 6} class="tick">−60 min</text>
        <text x=${left + plotW / 2} y=${height - 6} class="tick" text-anchor="middle">−30 min</text>
        <text x=${left + plotW} y=${height - 6} class="tick" text-anchor="end">now</text>
        ${minutes.map((m, i) => {
          let y = 10 + plotH;
          return OUTCOMES.map((o) => {
            const h = (m[o.key] / max) * plotH;
            if (h === 0) return nothing;
            y -= h;
            const title = `${new Date(m.minute).toLocaleTimeString()}: ${m[o.key]} ${o.label}`;
            return svg`<rect
              x=${left + i * barW + 1}
              y=${y}
              width=${Math.max(1, barW - 2)}
              height=${h}
              class=${`bar o-${o.key}`}
            ><title>${title}</title></rect>`;
          });
        })}
      </svg>
      <ul class="legend" id="chart-summary">
        ${OUTCOMES.map(
          (o, i) =>
            html`<li>
              <svg width="14" height="14" aria-hidden="true">
                <rect width="14" height="14" class=${`bar o-${o.key}`}></rect>
              </svg>
              ${o.label}: <strong>${sums[i]}</strong>
            </li>`,
        )}
      </ul>
    </figure>`;
  }

  private attempts(job: Job) {
    return html`<tr class="attempts">
      <td colspan=${JOB_COLUMNS.length}>
        ${dataTable({
          caption: html`Attempts of job <code>${job.id}</code> (${job.attempts.length} of at most ${job.max_attempts})`,
          columns: ['#', 'Started', 'Duration', 'Outcome', 'Next attempt', 'Forward record'],
          items: job.attempts,
          row: (a) =>
            html`<tr>
              <td>${a.number}</td>
              <td>${formatTime(a.started_at)}</td>
              <td>${a.duration_ms === null ? 'running' : `${Math.round(a.duration_ms)} ms`}</td>
              <td>${attemptBadge(a)}</td>
              <td>${a.next_attempt_at ? formatTime(a.next_attempt_at) : '—'}</td>
              <td><code>${a.request_id}</code></td>
            </tr>`,
          empty: 'No attempt yet.',
        })}
      </td>
    </tr>`;
  }

  override render() {
    return html`
      <h1>Activity</h1>
      ${problemAlert(this.error)}
      <p class="refresh-note" aria-live="polite">
        ${this.refreshing ? html`<span aria-hidden="true">↻ </span>Refreshing every 2 seconds while a job is queued or running.` : nothing}
      </p>
      ${this.stats ? this.chart() : nothing}
      <section aria-labelledby="jobs-title">
        <h2 id="jobs-title">Queued forwards</h2>
        <label for="job-status">Status</label>
        <select
          id="job-status"
          @change=${(e: Event) => {
            this.status = (e.target as HTMLSelectElement).value;
            this.jobCursor = undefined;
            void this.refresh();
          }}
        >
          <option value="">All</option>
          ${JOB_STATUSES.map((s) => html`<option value=${s} ?selected=${s === this.status}>${s}</option>`)}
        </select>
        ${
          this.jobs
            ? html`${dataTable({
                columns: JOB_COLUMNS,
                items: this.jobs.items,
                row: (j) =>
                  html`<tr>
                      <td>${formatTime(j.created_at)}</td>
                      <td>${jobBadge(j.status)}</td>
                      <td>${j.target.method} <code>${j.target.url}</code></td>
                      <td>
                        <button
                          type="button"
                          class="small"
                          aria-expanded=${this.open.has(j.id) ? 'true' : 'false'}
                          @click=${() => this.toggle(j.id)}
                          aria-label=${`Attempts of job ${j.id}: ${j.attempts.length}`}
                        >
                          Attempts (${j.attempts.length})
                        </button>
                      </td>
                      <td>${formatTime(j.finished_at)}</td>
                      <td><code>${j.id}</code></td>
                    </tr>
                    ${this.open.has(j.id) ? this.attempts(j) : nothing}`,
                empty: `No queued forwards${this.status ? ` with status ${this.status}` : ''}.`,
              })}
              ${pager('Queued forwards', this.jobs, (c) => ((this.jobCursor = c), void this.refresh()))}`
            : nothing
        }
      </section>
      <section aria-labelledby="records-title">
        <h2 id="records-title">Forward records</h2>
        ${
          this.records
            ? html`${dataTable({
                columns: RECORD_COLUMNS,
                items: this.records.items,
                row: (r) =>
                  html`<tr>
                      <td>${formatTime(r.created_at)}</td>
                      <td>${recordBadge(r)}</td>
                      <td>
                        ${r.method ?? ''} <code>${r.target_url ?? '—'}</code>
                        ${r.merchant_initiated ? statusBadge('neutral', 'merchant-initiated') : nothing}
                      </td>
                      <td>${Math.round(r.duration_ms)} ms</td>
                      <td><code>${r.id}</code></td>
                      <td>
                        <button
                          type="button"
                          class="small"
                          aria-expanded=${this.details.has(r.id) ? 'true' : 'false'}
                          aria-label=${`Request and answer of forward ${r.id}`}
                          @click=${() => void this.toggleRecord(r.id)}
                        >
                          Bodies
                        </button>
                      </td>
                    </tr>
                    ${this.details.has(r.id) ? this.recordDetail(r.id) : nothing}`,
                empty: 'No forwards yet.',
              })}
              ${pager('Forward records', this.records, (c) => ((this.recordCursor = c), void this.refresh()))}`
            : nothing
        }
      </section>
    `;
  }
}
customElements.define('vf-activity', VfActivity);
