import { randomBytes } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
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
 * Every append is one write and one fdatasync for the whole batch; the directory is fsync'd when a
 * file appears, is renamed or disappears. A file of a process that is no longer running is
 * claimable as it is, whatever its state, so a crash loses nothing that was acknowledged.
 */
export class ForwardRecordSpool {
  private file: { handle: FileHandle; path: string } | null = null;
  private sequence = 0;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(readonly dir: string) {}

  /** Appends the entries and returns once they are on disk. Rejects if they may not be. */
  append(entries: SpoolEntry[]): Promise<void> {
    const text = entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
    return this.serially(async () => {
      const file = this.file ?? (await this.openFile());
      try {
        await file.handle.write(text);
        await file.handle.datasync();
      } catch (error) {
        // The file may end in a torn line now; nothing more goes into it (replay skips a torn line).
        this.file = null;
        await file.handle.close().catch(() => undefined);
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
   * The entries of a claimed file, read as a stream (a long outage makes a long file); a line that
   * does not parse (torn by a crash mid-write) is counted in `torn` and skipped.
   */
  async *read(path: string, torn: { count: number }): AsyncGenerator<SpoolEntry> {
    const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const line of lines) {
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
    const path = join(dir, `${OWNER}-${Date.now()}.jsonl`);
    const handle = await open(path, 'a', 0o600);
    try {
      await handle.write(entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
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

  private async openFile(): Promise<{ handle: FileHandle; path: string }> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const path = join(this.dir, `${OWNER}-${Date.now()}-${++this.sequence}${OPEN_SUFFIX}`);
    const handle = await open(
      path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL,
      0o600,
    );
    try {
      await this.syncDir();
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
    this.file = { handle, path };
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
