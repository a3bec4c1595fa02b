import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { storeCard } from '../factories/cards';
import { createMerchantWithConfig } from '../factories/forwarding-merchants';
import { listenOnLoopback } from '../support/downstream';
import { EntryPoint, startEntryPoint } from '../support/entry-point';
import { http } from '../support/http';
import { entryPointEnv, startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * SIGTERM as an orchestrator sends it (decision 0148): readiness turns false at once while the process still
 * serves, a forward in flight is answered in full, and only then does the listener close and the process exit 0.
 */
describe('Shutdown: readiness false first, then drain, then close', () => {
  let seed: TestApp;
  let api: EntryPoint | undefined;
  const held: ServerResponse[] = [];
  const arrived: IncomingMessage[] = [];
  // A PSP that holds every answer until the test lets it go: the forward stays in flight across SIGTERM.
  const psp = createServer((req, res) => {
    arrived.push(req);
    req.resume();
    held.push(res);
  });
  let pspPort: number;

  beforeAll(async () => {
    pspPort = (await listenOnLoopback(psp)).port;
    seed = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
  });
  afterAll(async () => {
    api?.child.kill('SIGKILL');
    for (const res of held) res.destroy();
    psp.closeAllConnections();
    await new Promise((resolve) => psp.close(resolve));
    await seed?.close();
  });

  it('a forward in flight at SIGTERM is answered; readiness is 503 meanwhile; then the process exits 0', async () => {
    const merchant = await createMerchantWithConfig(seed, pspPort, 'Drain');
    const card = await storeCard(seed, merchant.id);
    api = startEntryPoint('dist/main.js', {
      env: entryPointEnv({ PORT: '0', FORWARD_INSECURE_HOSTS: '127.0.0.1', SHUTDOWN_DRAIN_DELAY: '2' }),
      ready: /API listening on (http:\/\/[^\s]+) /,
    });
    const [, url] = await api.started;
    expect((await http(url, '/health/ready')).status).toBe(200);

    const forward = http(url, '/vault-forward', {
      method: 'POST',
      token: merchant.token,
      headers: {
        'x-vault-forward-url': `http://127.0.0.1:${pspPort}/pay`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card.id,
        'content-type': 'application/json',
      },
      rawBody: '{"number":"{{ CARD_NUMBER_1 }}"}',
    });
    await waitFor(() => arrived.length === 1, { what: 'the forward to reach the PSP' });

    api.child.kill('SIGTERM');
    // Still listening, no longer ready.
    const notReady = await waitFor(
      async () => {
        const ready = await http(url, '/health/ready');
        return ready.status === 503 && ready;
      },
      { what: 'readiness to turn false after SIGTERM' },
    );
    expect(notReady.body.detail).toBe('Not ready: this process is shutting down.');
    expect((await http(url, '/health/live')).status).toBe(200);

    // The forward in flight completes whole, after readiness went false.
    held[0].writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    const answered = await forward;
    expect(answered.status).toBe(200);
    expect(answered.text).toBe('{"ok":true}');
    expect(await api.exited).toBe(0);
    // And nothing listens any more.
    await expect(http(url, '/health/live')).rejects.toThrow();
  });
});
