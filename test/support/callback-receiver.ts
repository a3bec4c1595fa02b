import { createServer } from 'node:http';
import { listenOnLoopback } from './downstream';

/** A callback receiver on 127.0.0.1: keeps every request's path and body as text, answers 200. */
export async function startCallbackReceiver() {
  const received: Array<{ url: string; body: string }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url!, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end();
    });
  });
  return { ...(await listenOnLoopback(server)), received };
}

export type CallbackReceiver = Awaited<ReturnType<typeof startCallbackReceiver>>;
