import { Logger } from '@nestjs/common';
import { open, readdir, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Pool, type PoolClient } from 'pg';
import type { DataSource, Repository } from 'typeorm';
import type { AppConfig } from '../../src/platform/config/config';
import { ProblemException } from '../../src/platform/problem/problem';
import { Sql } from '../../src/platform/database/sql';
import { ForwardRecordEntity } from '../../src/modules/forwarding/records/forward-record.entity';
import { ForwardRecordsRepository } from '../../src/modules/forwarding/records/forward-records.repository';
import type { ForwardRecord } from '../../src/modules/forwarding/records/forward-record';
import {
  ForwardRecordSpool,
  type OpenSpoolFile,
  type SpoolEntry,
  type SpoolFile,
} from '../../src/modules/forwarding/records/forward-record-spool';
import { ForwardRecordsService } from '../../src/modules/forwarding/records/forward-records.service';
import { Metrics } from '../../src/platform/metrics/metrics.service';
import { SYSTEM_CLOCK } from '../../src/platform/time/clock';
import type { SecretSealer } from '../../src/modules/vault/secret-sealer';
import { testTempDir } from '../support/temp-data-dir';

/**
 * A real file on a file system that fills up as a full one does: a write beyond the free space takes
 * what fits and returns that count without an error, the next one fails with ENOSPC. `maxWrite` caps
 * what one write takes (a short write with room to spare); `truncateFails` makes truncate fail too.
 */
class FillingDisk {
  free = Infinity;
  maxWrite = Infinity;
  truncateFails = false;
  opened = 0;
  writes = 0;

  readonly open: OpenSpoolFile = async (path) => {
    this.opened++;
    const handle = await open(path, 'wx', 0o600);
    let size = 0;
    const file: SpoolFile = {
      write: async (data, offset, length) => {
        this.writes++;
        if (this.free <= 0)
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        const n = Math.min(length, this.free, this.maxWrite);
        const { bytesWritten } = await handle.write(data, offset, n, size);
        size += bytesWritten;
        this.free -= bytesWritten;
        return { bytesWritten };
      },
      datasync: () => handle.datasync(),
      truncate: async (length) => {
        if (this.truncateFails) throw Object.assign(new Error('EIO: i/o error, ftruncate'), { code: 'EIO' });
        await handle.truncate(length);
        this.free += size - length;
        size = length;
      },
      close: () => handle.close(),
    };
    return file;
  };
}

const record = (id: string): ForwardRecord => ({
  id,
  merchantAccountId: 'm',
  configId: null,
  method: 'POST',
  targetUrl: null,
  status: null,
  durationMs: 0,
  paymentMethodIds: ['pm'],
  authenticationIds: [],
  errorType: null,
});
const entry = (id: string): SpoolEntry => ({ kind: 'pending', at: new Date().toISOString(), record: record(id) });
const batch = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => entry(`${prefix}-${i}`));
const bytesOf = (entries: SpoolEntry[]) =>
  Buffer.byteLength(entries.map((e) => `${JSON.stringify(e)}\n`).join(''), 'utf8');

async function spooled(spool: ForwardRecordSpool): Promise<{ ids: string[]; torn: number; files: string[] }> {
  const files = (await readdir(spool.dir)).sort();
  const torn = { count: 0 };
  const ids: string[] = [];
  for (const name of files) for await (const e of spool.read(join(spool.dir, name), torn)) ids.push(e.record.id);
  return { ids, torn: torn.count, files };
}

describe('ForwardRecordSpool on a file system that fills up', () => {
  it('continues a short write until every byte of the batch is written', async () => {
    const disk = Object.assign(new FillingDisk(), { maxWrite: 100 });
    const spool = new ForwardRecordSpool(testTempDir('vf-spool-short-'), disk.open);
    const entries = batch('a', 5);
    await spool.append(entries);
    await spool.close();
    expect(disk.writes).toBe(Math.ceil(bytesOf(entries) / 100));
    expect(await spooled(spool)).toMatchObject({ ids: entries.map((e) => e.record.id), torn: 0 });
  });

  it('refuses a batch that does not fit, cuts its bytes off and takes the next batch in the same file', async () => {
    const disk = new FillingDisk();
    const spool = new ForwardRecordSpool(testTempDir('vf-spool-full-'), disk.open);
    const [first, refused, next] = [batch('first', 3), batch('refused', 3), batch('next', 3)];
    await spool.append(first);
    disk.free = Math.floor(bytesOf(refused) / 2);
    for (let i = 0; i < 50; i++) await expect(spool.append(refused)).rejects.toMatchObject({ code: 'ENOSPC' });
    const [name] = await readdir(spool.dir);
    expect((await stat(join(spool.dir, name))).size).toBe(bytesOf(first));

    disk.free = Infinity; // space freed
    await spool.append(next);
    await spool.close();
    expect(disk.opened).toBe(1);
    expect(await spooled(spool)).toEqual({
      ids: [...first, ...next].map((e) => e.record.id),
      torn: 0,
      files: [name],
    });
  });

  it('appends nothing after torn bytes it could not cut off: refused until the truncate works', async () => {
    const disk = new FillingDisk();
    const spool = new ForwardRecordSpool(testTempDir('vf-spool-torn-'), disk.open);
    await spool.append(batch('first', 2));
    disk.free = 10;
    disk.truncateFails = true;
    await expect(spool.append(batch('cut', 2))).rejects.toMatchObject({ code: 'ENOSPC' });
    disk.free = Infinity;
    await expect(spool.append(batch('behind-torn', 2))).rejects.toMatchObject({ code: 'EIO' });
    disk.truncateFails = false;
    await spool.append(batch('last', 2));
    await spool.close();
    expect(await spooled(spool)).toMatchObject({
      ids: ['first-0', 'first-1', 'last-0', 'last-1'],
      torn: 0,
    });
  });

  it('never replays a last line that lacks its newline, even one that parses', async () => {
    const dir = testTempDir('vf-spool-replay-');
    const spool = new ForwardRecordSpool(dir);
    // A crash between the line and its newline: the batch was never acknowledged, so its forward never sent.
    await writeFile(join(dir, 'x.jsonl'), `${JSON.stringify(entry('whole'))}\n${JSON.stringify(entry('cut'))}`);
    expect(await spooled(spool)).toMatchObject({ ids: ['whole'], torn: 1 });
  });
});

describe('ForwardRecordsService when neither the database nor the spool takes a disclosure', () => {
  let pool: Pool;
  let service: ForwardRecordsService;
  const disk = new FillingDisk();
  const errors: string[] = [];
  const logs: string[] = [];

  beforeAll(async () => {
    // A real pg pool to a port nothing listens on: every statement fails as in a PostgreSQL outage.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    pool = new Pool({ host: '127.0.0.1', port, user: 'nobody', database: 'none', connectionTimeoutMillis: 1_000 });
    const dataSource = {
      driver: {
        obtainMasterConnection: async () => {
          const client: PoolClient = await pool.connect();
          return [client, (error?: Error) => client.release(error)];
        },
      },
    } as unknown as DataSource;
    const config = {
      databaseUrl: `postgres://127.0.0.1:${port}/none`,
      database: { transactionPooling: false },
      forwardRecordSpoolDir: testTempDir('vf-spool-service-'),
    } as unknown as AppConfig;
    jest.spyOn(Logger.prototype, 'error').mockImplementation((text: unknown) => void errors.push(String(text)));
    jest.spyOn(Logger.prototype, 'log').mockImplementation((text: unknown) => void logs.push(String(text)));
    // The writer's statements only: the routes' TypeORM repository is never reached here.
    const records = new ForwardRecordsRepository(new Sql(dataSource, config), {} as Repository<ForwardRecordEntity>, {
      ledger: { enabled: true, signingKey: null, pkcs11KeyLabel: null, sealIntervalMs: 10_000, retentionDays: 400 },
    });
    service = new ForwardRecordsService(records, config, new Metrics(), {} as SecretSealer, SYSTEM_CLOCK, disk.open);
  });

  afterAll(async () => {
    await service.onModuleDestroy();
    await pool.end();
    jest.restoreAllMocks();
  });

  it('refuses each with a 503 (so it is not sent), logs the episode once, and takes disclosures again later', async () => {
    await service.disclose(record('before'));
    disk.free = 0;
    const refused = Array.from({ length: 20 }, (_, i) => record(`refused-${i}`));
    for (const r of refused) {
      const error = (await service.disclose(r).catch((e: unknown) => e)) as ProblemException;
      expect(error).toBeInstanceOf(ProblemException);
      expect(error.definition.status).toBe(503);
      expect(r.disclosed).toBeFalsy();
    }
    expect(errors.filter((e) => e.includes('could not spool'))).toHaveLength(1);

    disk.free = Infinity;
    const after = record('after');
    await service.disclose(after);
    expect(after.disclosed).toBe(true);
    expect(logs.filter((l) => l.includes('written again'))).toEqual([
      'forward records are written again (the spool takes them again), after 20 failed spool appends',
    ]);
    expect(disk.opened).toBe(1);
  });
});
