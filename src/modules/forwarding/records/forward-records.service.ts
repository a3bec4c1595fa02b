import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, Optional } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { Metrics } from '../../../platform/metrics/metrics.service';
import {
  DatabaseUnavailableError,
  isDatabaseUnavailable,
  serviceUnavailableProblem,
} from '../../../platform/problem/database-errors';
import { StatementBatcher } from '../../../platform/database/statement-batcher';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { withTimeout } from '../../../platform/time/with-timeout';
import { SecretSealer } from '../../vault/secret-sealer';
import type { ForwardRecord } from './forward-record';
import { sealBodies } from './sealed-bodies';
import { latestById } from './forward-record-columns';
import { ForwardRecordsRepository } from './forward-records.repository';
import { ForwardRecordSpool, OPEN_SPOOL_FILE, type OpenSpoolFile, SpoolEntry } from './forward-record-spool';

/** Outcomes are written in batches: one multi-row statement (one commit, one WAL flush) per batch. */
const FLUSH_EVERY_MS = 50;
const MAX_BATCH = 500;
// Disclosure batches commit one at a time (StatementBatcher's group commit): a forward arriving during a commit joins the next
// batch. Two or four in flight made smaller batches and cost more CPU than they saved (bench:forward: 2571 → 1931 / 1843 req/s).
/** A disclosure not committed within this goes to the spool instead (the forward waits at most this long for it). */
const DURABLE_WITHIN_MS = 2_000;
/**
 * What missing that bound rejects with (withTimeout): it counts as the database being unavailable, so the
 * records are spooled. The commit may still land later; that is harmless (the statements are idempotent).
 */
const noCommitInTime = () => new DatabaseUnavailableError(`no commit within ${DURABLE_WITHIN_MS} ms`);
/** How often the spool is looked at, and the database probed while it is thought down. */
const REPLAY_EVERY_MS = 1_000;
/** Outcomes kept in memory when neither the table nor the spool takes them, retried with the next flush. */
const MAX_HELD_OUTCOMES = 100_000;

/**
 * Forward records, with the durability rule of docs/decisions/0049: a forward that may disclose card
 * data is sent only once its record is committed, or fsync'd to the local spool when PostgreSQL
 * does not commit in time; the outcome follows in batches. Spooled entries are replayed into the
 * table in the background once PostgreSQL answers, and at start-up.
 */
@Injectable()
export class ForwardRecordsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('ForwardRecords');
  private readonly spool: ForwardRecordSpool;
  /**
   * Group commit, no timer: a forward waits for its disclosure. A failed batch fails whole (makeDurable
   * already spooled what the table refused; what it throws is that neither could take it).
   */
  private readonly disclosures = new StatementBatcher<ForwardRecord, void>({
    many: (records) => this.makeDurable(records).then(() => records.map(() => undefined)),
    one: (record) => this.makeDurable([record]),
    maxBatch: MAX_BATCH,
    isOutage: () => true,
  });
  /** Nobody waits for an outcome: batched by size or by delay. writeOutcomes never throws. */
  private readonly outcomes = new StatementBatcher<ForwardRecord, void>({
    many: (records) => this.writeOutcomes(records).then(() => records.map(() => undefined)),
    one: (record) => this.writeOutcomes([record]),
    maxBatch: MAX_BATCH,
    maxDelayMs: FLUSH_EVERY_MS,
    isOutage: () => true,
  });
  /** Set when a write failed for want of the database: writes go straight to the spool until a probe succeeds. */
  private databaseDown = false;
  /**
   * Spool appends failed since the last line about them. A full disk fails every append but one small enough for the
   * room a refused batch left, so appends flap: one error line and one "written again" line per outage, whatever the
   * flapping; the failures after those are counted in the line that says the database answers again.
   */
  private spoolFailures = 0;
  /** The outage's error line and its first "written again" line are out: later flaps are only counted. */
  private spoolFailureLogged = false;
  private spoolRecoveryLogged = false;
  private replayTimer: NodeJS.Timeout | null = null;
  private replaying: Promise<void> | null = null;
  private closing = false;

  constructor(
    private readonly records: ForwardRecordsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    metrics: Metrics,
    private readonly sealer: SecretSealer,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() @Inject(OPEN_SPOOL_FILE) openSpoolFile?: OpenSpoolFile,
  ) {
    this.spool = new ForwardRecordSpool(config.forwardRecordSpoolDir, openSpoolFile, () => clock.epochMs());
    metrics.gauge(
      'forward_disclosures_waiting',
      'Forwards with card data waiting for their record to be committed or spooled before they are sent.',
      () => this.disclosures.size,
    );
    metrics.gauge(
      'forward_outcomes_waiting',
      'Forward outcomes queued for the next batch write (or held for a retry while neither the table nor the spool takes them).',
      () => this.outcomes.size,
    );
    metrics.gauge(
      'forward_record_spool_bytes',
      'Bytes of forward records in the local spool directory, waiting to be replayed into PostgreSQL.',
      () => this.spool.sizeBytes(),
    );
    metrics.gauge(
      'forward_records_database_down',
      '1 while forward records go straight to the spool because PostgreSQL did not answer, else 0.',
      () => (this.databaseDown ? 1 : 0),
    );
  }

  onApplicationBootstrap(): void {
    // Files a previous process left behind (crashed or stopped mid-outage) go in now, then as they come.
    void this.replay();
    this.replayTimer = setInterval(() => void this.replay(), REPLAY_EVERY_MS);
    this.replayTimer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    if (this.replayTimer) clearInterval(this.replayTimer);
    await this.disclosures.flush();
    await this.flush();
    await this.replaying;
    await this.spool
      .seal()
      .catch((error: unknown) => this.logger.error(`could not seal the spool file: ${message(error)}`));
  }

  /**
   * Resolves once the record of a forward about to send card data is durable: committed (group
   * commit: disclosures arriving while one batch commits form the next), or appended to the spool
   * and fsync'd. Rejects with a 503 when neither is possible; the forward must then not be sent.
   */
  disclose(record: ForwardRecord): Promise<void> {
    return this.disclosures.run(record);
  }

  /**
   * Queues a record with its outcome; it is in the table within ~50 ms. A commit per forward would
   * make every forward wait for a WAL flush; batching keeps that off the answer. A record that cannot
   * be written is spooled, or kept and retried, never dropped.
   */
  write(record: ForwardRecord): void {
    // Sealed before it is queued, so neither the spool nor the table ever holds the bodies in plain text. The bodies
    // are a convenience, the record is the guarantee: a key store that cannot seal (an HSM away) drops the bodies only.
    if (record.bodies) {
      try {
        record.sealedBodies = sealBodies(this.sealer, record);
      } catch (error) {
        this.logger.warn(`forward record ${record.id} kept without its bodies: ${message(error)}`);
      }
      record.bodies = undefined;
    }
    this.outcomes.submit(record);
  }

  /** Writes every outcome queued so far (also on shutdown). */
  flush(): Promise<void> {
    return this.outcomes.flush();
  }

  private async makeDurable(records: ForwardRecord[]): Promise<void> {
    if (!this.databaseDown) {
      try {
        const pending = records.map(asPending);
        await withTimeout(this.records.insertPending(pending), DURABLE_WITHIN_MS, noCommitInTime);
        for (const record of records) {
          record.disclosedInTable = true;
          record.disclosed = true;
        }
        return;
      } catch (error) {
        this.databaseFailed(error, `could not commit ${records.length} disclosures; spooling them`);
      }
    }
    const at = new Date(this.clock.epochMs()).toISOString();
    try {
      await this.spoolAppend(records.map((record) => ({ kind: 'pending', at, record: asPending(record) })));
    } catch (error) {
      this.spoolFailed(`could not spool ${records.length} disclosures, refusing them`, error);
      throw serviceUnavailableProblem(
        'The forward could not be recorded (database and local spool unavailable); nothing was sent. Retry shortly.',
      );
    }
    for (const record of records) {
      record.spooledAt = at;
      record.disclosed = true;
    }
  }

  private async writeOutcomes(batch: ForwardRecord[]): Promise<void> {
    if (!this.databaseDown) {
      try {
        await withTimeout(this.writeOutcomesToTable(latestById(batch)), DURABLE_WITHIN_MS, noCommitInTime);
        return;
      } catch (error) {
        this.databaseFailed(error, `could not record ${batch.length} forwards; spooling them`);
      }
    }
    const at = new Date(this.clock.epochMs()).toISOString();
    try {
      await this.spoolAppend(
        batch.map((record) => ({ kind: 'final', at, record: { ...record, disclosedInTable: undefined } })),
      );
    } catch (error) {
      // No retry once shutting down: nothing would be left to write to.
      const kept = !this.closing && this.outcomes.size + batch.length <= MAX_HELD_OUTCOMES;
      const what = `could not spool ${batch.length} forward records`;
      if (kept) this.spoolFailed(`${what} (kept in memory, retried)`, error);
      else this.logger.error(`${what} (LOST: shutting down or memory bound reached): ${message(error)}`);
      if (kept) this.outcomes.retry(batch, REPLAY_EVERY_MS);
    }
  }

  private async writeOutcomesToTable(batch: ForwardRecord[]): Promise<void> {
    let rest = batch;
    const known = batch.filter((r) => r.disclosedInTable);
    if (known.length > 0) {
      const done = await this.records.updateOutcomes(known);
      rest = batch.filter((r) => !done.has(r.id));
    }
    if (rest.length > 0) await this.records.upsertFinal(rest);
  }

  /** One replay pass: if the database answers, every spool file this process may take goes into the table. */
  private replay(): Promise<void> {
    this.replaying ??= this.replayOnce()
      .catch((error: unknown) => this.logger.error(`spool replay failed, will retry: ${message(error)}`))
      .finally(() => (this.replaying = null));
    return this.replaying;
  }

  private async replayOnce(): Promise<void> {
    const files = await this.spool.replayable();
    if (files.length === 0 && !this.spool.writing && !this.databaseDown) return;
    try {
      await withTimeout(this.records.probe(), DURABLE_WITHIN_MS, noCommitInTime);
    } catch {
      return;
    }
    if (this.databaseDown) this.logger.log('the database answers again; forward records go to it');
    this.databaseDown = false;
    this.spoolEpisodeEnded('the database answers again', true);
    if (this.spool.writing) {
      await this.spool.seal();
      files.push(...(await this.spool.replayable()).filter((name) => !files.includes(name)));
    }
    for (const name of files) {
      const path = await this.spool.claim(name);
      if (path) await this.replayFile(path);
    }
  }

  private async replayFile(path: string): Promise<void> {
    const torn = { count: 0 };
    // Disclosures and outcomes commute, so each kind is written as its batch fills, whatever the order.
    const batches: Record<SpoolEntry['kind'], SpoolEntry[]> = { pending: [], final: [] };
    let count = 0;
    const write = async (kind: SpoolEntry['kind']) => {
      const batch = batches[kind];
      batches[kind] = [];
      if (batch.length > 0) await this.replayBatch(kind, batch);
    };
    for await (const entry of this.spool.read(path, torn)) {
      count++;
      batches[entry.kind].push(entry);
      if (batches[entry.kind].length >= MAX_BATCH) await write(entry.kind);
    }
    await write('pending');
    await write('final');
    if (torn.count > 0) this.logger.warn(`${path}: skipped ${torn.count} torn or unreadable lines`);
    await this.spool.remove(path);
    this.logger.log(`replayed ${count} spooled forward records from ${path}`);
  }

  /** A batch the table refuses for a reason other than an outage is retried row by row, and the refused rows set aside. */
  private async replayBatch(kind: SpoolEntry['kind'], entries: SpoolEntry[]): Promise<void> {
    // created_at, if the row is new: when the disclosure was spooled, else when this entry was.
    const rows = (list: SpoolEntry[]) =>
      latestById(list.map((e) => ({ ...e.record, spooledAt: e.record.spooledAt ?? e.at })));
    try {
      await withTimeout(this.records.writeSpooled(kind, rows(entries)), DURABLE_WITHIN_MS, noCommitInTime);
      return;
    } catch (error) {
      if (isDatabaseUnavailable(error) || entries.length === 1) throw error;
    }
    const refused: SpoolEntry[] = [];
    for (const entry of entries) {
      try {
        await withTimeout(this.records.writeSpooled(kind, rows([entry])), DURABLE_WITHIN_MS, noCommitInTime);
      } catch (error) {
        if (isDatabaseUnavailable(error)) throw error;
        refused.push(entry);
      }
    }
    if (refused.length > 0) {
      const kept = await this.spool.reject(refused);
      this.logger.error(`the table refused ${refused.length} spooled forward records; kept in ${kept}`);
    }
  }

  private async spoolAppend(entries: SpoolEntry[]): Promise<void> {
    await this.spool.append(entries);
    this.spoolEpisodeEnded('the spool takes them again');
  }

  /** Ends an episode of failing spool appends: the spool took a batch, or the database is back (the outage's end). */
  private spoolEpisodeEnded(how: string, outageOver = false): void {
    if (this.spoolFailures > 0 && (outageOver || !this.spoolRecoveryLogged)) {
      this.logger.log(`forward records are written again (${how}), after ${this.spoolFailures} failed spool appends`);
      this.spoolFailures = 0;
      this.spoolRecoveryLogged = !outageOver;
    }
    if (outageOver) this.spoolFailureLogged = this.spoolRecoveryLogged = false;
  }

  private spoolFailed(what: string, error: unknown): void {
    this.spoolFailures++;
    if (this.spoolFailureLogged) return;
    this.spoolFailureLogged = true;
    this.logger.error(`${what}: ${message(error)} (logged once until the database answers again)`);
  }

  private databaseFailed(error: unknown, what: string): void {
    if (isDatabaseUnavailable(error)) this.databaseDown = true;
    this.logger.error(`${what}: ${message(error)}`);
  }
}

function asPending(record: ForwardRecord): ForwardRecord {
  // The bodies go with the outcome only: a disclosure (and its spool line) stays small.
  return {
    ...record,
    status: null,
    durationMs: 0,
    errorType: null,
    spooledAt: undefined,
    disclosedInTable: undefined,
    bodies: undefined,
    sealedBodies: undefined,
  };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
