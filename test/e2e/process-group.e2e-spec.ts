import { Agent, request } from 'undici';
import { EntryPoint, startEntryPoint } from '../support/entry-point';
import { entryPointEnv } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * WEB_CONCURRENCY=2: `node dist/main.js` as an operator runs it starts a supervisor and two API
 * processes on one port (app/bootstrap/processes.ts). What each process answered is read from its request
 * log lines, which carry its pid.
 */
describe('WEB_CONCURRENCY: several API processes on one port', () => {
  let api: EntryPoint;
  let url: string;
  // A new connection per request: the supervisor hands connections to the processes in turn.
  const agent = new Agent({ pipelining: 0 });

  const lines = (): Array<Record<string, any>> =>
    api
      .output()
      .stdout.split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, any>);
  const listening = () => lines().filter((line) => /^API listening on /.test(line.msg));
  const answeredBy = (path: string) =>
    lines()
      .filter((line) => line.msg === 'request completed' && line.req?.url === path)
      .map((line) => line.pid as number);
  const get = async (path: string) => {
    try {
      // Bounded: a connection handed to the process being killed must fail, not hang the test.
      const response = await request(`${url}${path}`, {
        dispatcher: agent,
        reset: true,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      await response.body.dump();
      return response.statusCode;
    } catch (error) {
      return (error as { code?: string }).code ?? 'error';
    }
  };

  beforeAll(async () => {
    api = startEntryPoint('dist/main.js', {
      env: entryPointEnv({
        CURSOR_SECRET: 'test-cursor-secret-not-for-production-0123456789',
        PORT: '0',
        METRICS_PORT: '0',
        WEB_CONCURRENCY: '2',
      }),
      ready: /API listening on[\s\S]*API listening on (http:\/\/\S+) /,
      timeoutMs: 90_000,
    });
    url = (await api.started)[1];
  });

  afterAll(async () => {
    if (api && api.child.exitCode === null) {
      api.child.kill('SIGKILL');
      await api.exited;
    }
    await agent.close();
  });

  it('serves from two processes, not the supervisor, and sums their metrics on one port', async () => {
    const supervisor = api.child.pid;
    const processes = new Set(listening().map((line) => line.pid as number));
    expect(processes.size).toBe(2);
    expect(processes.has(supervisor!)).toBe(false);

    for (let i = 0; i < 10; i++) expect(await get('/health/live')).toBe(200);
    await waitFor(() => answeredBy('/health/live').length === 10, { what: 'ten request log lines' });
    expect(new Set(answeredBy('/health/live'))).toEqual(processes);

    const metricsLine = lines().find((line) => /^Prometheus metrics of the api processes on /.test(line.msg));
    expect(metricsLine?.pid).toBe(supervisor);
    const metrics = await request(metricsLine!.msg.split(' on ')[1], { dispatcher: agent });
    expect(metrics.statusCode).toBe(200);
    const text = await metrics.body.text();
    // Summed over both processes: two Node.js processes' worth of the default metrics under one name.
    expect(text).toMatch(/^vault_forward_process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^vault_forward_forwards_total|# HELP vault_forward_forwards_total/m);
  });

  it('replaces a killed process; requests keep being answered by the other meanwhile', async () => {
    const [victim, survivor] = listening().map((line) => line.pid as number);
    const before = listening().length;
    process.kill(victim, 'SIGKILL');
    // One request at a time: a request can only be lost if the killed process held it.
    const answers: Array<number | string> = [];
    for (let i = 0; i < 20; i++) answers.push(await get('/health/ready'));
    expect(answers.filter((answer) => answer !== 200).length).toBeLessThanOrEqual(1);
    await waitFor(() => listening().length === before + 1, { what: 'a replacement process', timeoutMs: 60_000 });
    const replacement = listening().at(-1)!.pid as number;
    expect([victim, survivor]).not.toContain(replacement);
    expect(lines().some((line) => line.level === 50 && line.exited?.pid === victim)).toBe(true);
    expect(answeredBy('/health/ready')).toContain(survivor);
  }, 120_000);

  it('SIGHUP replaces every process one at a time without refusing a request; SIGTERM stops the group', async () => {
    const old = new Set(listening().map((line) => line.pid as number));
    const before = listening().length;
    api.child.kill('SIGHUP');
    const answers: Array<number | string> = [];
    let done = false;
    const replaced = waitFor(() => listening().length >= before + 2, { what: 'two new processes', timeoutMs: 90_000 })
      .then(() => waitFor(() => lines().some((line) => line.msg?.startsWith('replaced every api process'))))
      .finally(() => (done = true));
    while (!done) answers.push(await get('/health/live'));
    await replaced;
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.filter((answer) => answer !== 200)).toEqual([]);
    const fresh = listening()
      .slice(before)
      .map((line) => line.pid as number);
    for (const pid of fresh) expect(old.has(pid)).toBe(false);

    api.child.kill('SIGTERM');
    expect(await api.exited).toBe(0);
    for (const pid of fresh) expect(() => process.kill(pid, 0)).toThrow();
  }, 150_000);
});
