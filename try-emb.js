const { withBackend, createPostgresBackend } = require('bullmq');
(async () => {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const db = await PGlite.create();
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 16 });
  await server.start();
  const url = `postgresql://postgres@${server.getServerConn()}/postgres?sslmode=disable`;
  const B = withBackend(createPostgresBackend);
  const q = new B.Queue('t', { connection: { connectionString: url, migrate: true, max: 4 } });
  q.on('error', (e) => console.error('qerr', e.message));
  await q.waitUntilReady();
  console.log('migrated'); { const pg=require('pg'); const c=new pg.Client(url); await c.connect(); await c.query('SET search_path TO public, bullmq'); await c.end(); }
  const N = 2000; let got = 0; const t0 = Date.now();
  let done; const finished = new Promise((r) => (done = r));
  const w = new B.Worker('t', async () => { if (++got === N) done(); }, { connection: { connectionString: url, max: 10 }, concurrency: 32 });
  w.on('error', (e) => console.error('werr', e.message));
  await Promise.all(Array.from({length:N},(_, i) => q.add('f', { id: 'j' + i }, { jobId: 'j' + i, removeOnComplete: true })));
  console.log('added');
  await Promise.race([finished, new Promise((r) => setTimeout(r, 30000))]);
  console.log('got', got, 'of', N, (Date.now() - t0) + 'ms');
  await w.close(); await q.close(); await server.stop(); await db.close();
})().catch((e) => { console.error('FAIL', e); process.exit(1); });
