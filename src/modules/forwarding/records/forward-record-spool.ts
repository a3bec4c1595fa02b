import { randomBytes } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { SYSTEM_CLOCK } from '../../../platform/time/clock';
import type { ForwardRecord } from './forward-record';

/**
 * One line of a spool file. `pending` is a disclosure recorded before the forward was sent (no
 * outcome yet); `final` is the whole record with its outcome. `at` is when it was spooled, which
 * becomes the row's created_at if the row does not exist yet when it is replayed.
 */
export interface SpoolEntry {
  kind: 'pending' | 'final';
  at: string;
  record: ForwardRecord;
}

const OPEN_SUFFIX = '.open.jsonl';
const SEALED_SUFFIX = '.jsonl';
const CLAIM_MARK = '.claimed-';

/**
 * What an append does to its file: node's FileHandle has all of it. A file system that fills up answers a
 * write with fewer bytes than asked and no error, then ENOSPC; tests give a file that does exactly that.
 */
export interface SpoolFile {
  write(data: Uint8Array, offset: number, length: number): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

/** Creates a new spool file for appending (it must not exist yet). */
export type OpenSpoolFile = (path: string) => Promise<SpoolFile>;

/** Nest token for another OpenSpoolFile than the real file system's (tests); optional. */
export const OPEN_SPOOL_FILE = Symbol('OPEN_SPOOL_FILE');

const openForAppend: OpenSpoolFile = (path) =>
  open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL, 0o600);

/** This process, as named in its files: the pid, plus a token, since a restarted container often reuses its pid. */
const OWNER = `${process.pid}-${randomBytes(4).toString('hex')}`;

/**
 * The local, append-only file forward records fall back to when PostgreSQL cannot commit them in
 * time (docs/decisions/0049, "Forward records are durable before card data leaves"):
 *
 *   <pid>-<token>-<n>.open.jsonl          being appended to by process <pid>-<token>
 *   <pid>-<token>-<n>.jsonl               sealed by its writer: anyone may replay it
 *   <name>.jsonl.claimed-<pid>-<token>    being replayed by that process (renamed to claim it)
 *
 * Every append writes the whole batch (a short write is continued until every byte is written or
 * the file system fails) and then one fdatasync; the directory is fsync'd when a file appears, is
 * renamed or disappears. A batch that failed is cut off again (the file truncated to its length
 * before the batch), so the file holds whole batches only and the same file takes the next append;
 * if even the truncate fails, the next append retries it first and is refused if it fails again.
 * A file of a process that is no longer running is claimable as it is, whatever its state, so a
 * crash loses nothing that was acknowledged; a line cut by that crash has no newline and is skipped.
 */
export class ForwardRecordSpool {
  private file: AppendFile | null = null;
  private sequence = 0;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly dir: string,
    private readonly openFile: OpenSpoolFile = openForAppend,
    /** Epoch ms for the files' names. */
    private readonly now: () => number = () => SYSTEM_CLOCK.epochMs(),
  ) {}

  /** Appends the entries and returns once they are on disk. Rejects, leaving the file as it was, if they may not be. */
  append(entries: SpoolEntry[]): Promise<void> {
    const bytes = asLines(entries);
    return this.serially(async () => {
      const file = this.file ?? (await this.newFile());
      try {
        if (file.torn) await file.handle.truncate(file.length);
        file.torn = true; // until the whole batch is on disk
        await writeAll(file.handle, bytes);
        await file.handle.datasync();
        file.torn = false;
        file.length += bytes.length;
      } catch (error) {
        // Refused, so none of it may stay: a line of it would be replayed as a record of a forward never sent, and
        // a torn one would swallow the first line of the next append.
        if (file.torn)
          await file.handle.truncate(file.length).then(
            () => (file.torn = false),
            () => undefined,
          );
        throw error;
      }
    });
  }

  /** Bytes in the spool directory, every process's files together (metrics). */
  async sizeBytes(): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    const sizes = await Promise.all(
      names.map((name) =>
        stat(join(this.dir, name)).then(
          (s) => (s.isFile() ? s.size : 0),
          () => 0,
        ),
      ),
    );
    return sizes.reduce((a, b) => a + b, 0);
  }

  /** Whether this process has a file it is appending to. */
  get writing(): boolean {
    return this.file !== null;
  }

  /** Closes the file being appended to and marks it replayable; the next append starts a new one. */
  seal(): Promise<void> {
    return this.serially(async () => {
      const file = this.file;
      if (!file) return;
      this.file = null;
      if (file.torn) await file.handle.truncate(file.length).catch(() => undefined);
      await file.handle.close().catch(() => undefined);
      await rename(file.path, file.path.slice(0, -OPEN_SUFFIX.length) + SEALED_SUFFIX);
      await this.syncDir();
    });
  }

  /**
   * Files this process may replay now: sealed ones, its own earlier claims, and files or claims of
   * processes that are gone. Files other running processes are writing or replaying are left alone.
   */
  async replayable(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const current = this.file?.path;
    return names.filter((name) => {
      if (current && join(this.dir, name) === current) return false;
      // Ours (an earlier claim, or a file given up after a failed write) or a process's that is gone.
      const claim = name.indexOf(CLAIM_MARK);
      if (claim >= 0) return replayableBy(name.slice(claim + CLAIM_MARK.length));
      if (name.endsWith(OPEN_SUFFIX)) return replayableBy(name.split('-').slice(0, 2).join('-'));
      return name.endsWith(SEALED_SUFFIX);
    });
  }

  /**
   * Renames the file to mark it as this process's; null if another process claimed it first
   * (rename is atomic, so exactly one wins).
   */
  async claim(name: string): Promise<string | null> {
    const claim = name.indexOf(CLAIM_MARK);
    const base = claim >= 0 ? name.slice(0, claim) : name;
    const claimed = join(this.dir, `${base}${CLAIM_MARK}${OWNER}`);
    if (claimed === join(this.dir, name)) return claimed;
    try {
      await rename(join(this.dir, name), claimed);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    return claimed;
  }

  /**
   * The entries of a claimed file, read as a stream (a long outage makes a long file). Only a line
   * ended by its newline is whole: the last line without one (a crash mid-write) is counted in
   * `torn` and skipped even if it parses, as is a line that does not parse.
   */
  async *read(path: string, torn: { count: number }): AsyncGenerator<SpoolEntry> {
    for await (const line of wholeLines(path, torn)) {
      if (line === '') continue;
      let entry: SpoolEntry | undefined;
      try {
        entry = JSON.parse(line) as SpoolEntry;
      } catch {
        entry = undefined;
      }
      if (entry && (entry.kind === 'pending' || entry.kind === 'final') && typeof entry.record?.id === 'string')
        yield entry;
      else torn.count++;
    }
  }

  /** Removes a file whose entries are all committed. */
  async remove(path: string): Promise<void> {
    await unlink(path);
    await this.syncDir();
  }

  /** Entries the table refuses for good (not a database outage) are kept here for an operator, never dropped. */
  async reject(entries: SpoolEntry[]): Promise<string> {
    const dir = join(this.dir, 'rejected');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `${OWNER}-${this.now()}.jsonl`);
    const handle = await open(path, 'a', 0o600);
    try {
      await writeAll(handle, asLines(entries));
      await handle.datasync();
    } finally {
      await handle.close();
    }
    return path;
  }

  async close(): Promise<void> {
    await this.serially(async () => {
      await this.file?.handle.close().catch(() => undefined);
      this.file = null;
    });
  }

  private async newFile(): Promise<AppendFile> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const path = join(this.dir, `${OWNER}-${this.now()}-${++this.sequence}${OPEN_SUFFIX}`);
    const handle = await this.openFile(path);
    try {
      await this.syncDir();
    } catch (error) {
      // Not kept: an empty file, removed again so that failing appends do not leave one each.
      await handle.close().catch(() => undefined);
      await unlink(path).catch(() => undefined);
      throw error;
    }
    this.file = { handle, path, length: 0, torn: false };
    return this.file;
  }

  /** Makes a new, renamed or removed name durable (the file's own fsync does not cover its directory entry). */
  private async syncDir(): Promise<void> {
    const dir = await open(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.chain.then(task, task);
    this.chain = run.catch(() => undefined);
    return run;
  }
}

interface AppendFile {
  handle: SpoolFile;
  path: string;
  /** Bytes of whole, fdatasync'd batches: what the file is cut back to after a failed append. */
  length: number;
  /** Whether bytes past `length` may be there (an append failed and its truncate did not succeed yet). */
  torn: boolean;
}

/** One JSON line per entry, each ended by the newline that says it is whole. */
function asLines(entries: SpoolEntry[]): Buffer {
  return Buffer.from(entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''), 'utf8');
}

/** Writes every byte: a write may take fewer than asked (a filling file system) without an error. */
async function writeAll(handle: SpoolFile, bytes: Buffer): Promise<void> {
  for (let written = 0; written < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written);
    if (bytesWritten <= 0) throw noSpace();
    written += bytesWritten;
  }
}

/** What a write that took nothing and reported nothing means: the file system is full. */
function noSpace(): NodeJS.ErrnoException {
  return Object.assign(new Error('the spool file took no more bytes (file system full)'), { code: 'ENOSPC' });
}

/** The newline-ended lines of a file, streamed; a last line without its newline is counted in `torn`, not given. */
async function* wholeLines(path: string, torn: { count: number }): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of createReadStream(path, { encoding: 'utf8' }) as AsyncIterable<string>) {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    yield* lines;
  }
  if (rest !== '') torn.count++;
}

/** Whether this process may take a file owned by `<pid>-<token>`: its own, or one whose owner is no longer running here. */
function replayableBy(owner: string): boolean {
  if (owner === OWNER) return true;
  const pid = Number(owner.split('-')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return true;
  // Our own pid with another token: an earlier process that had our pid (a restarted container).
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
