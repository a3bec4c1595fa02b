import { createServer } from 'node:http';
import { listenOnLoopback } from './downstream';

/** The content type of each echo kind (the first segment of the path). */
export const ECHO_TYPES: Record<string, string> = {
  json: 'application/json',
  text: 'text/plain',
  xml: 'application/xml',
  form: 'application/x-www-form-urlencoded',
};
/** A Luhn-valid 19-digit number, past what a double holds exactly: /number answers it as a bare JSON number. */
export const BARE_NUMBER = '6212345678901234569';

/**
 * A PSP on 127.0.0.1 that echoes the request's URL and body (embedded as they came, so every spelling
 * stays one) as JSON, text or XML by the path's first segment; /form echoes the body alone, as a form;
 * /number answers a card number as a bare JSON number; /utf16 echoes a UTF-16LE body as it came.
 */
export async function startEcho() {
  const received: Array<{ url: string; body: Buffer }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = req.url!;
      received.push({ url, body });
      const kind = url.split('/')[1];
      if (kind === 'number') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(`{"x":${BARE_NUMBER}}`);
      }
      if (kind === 'utf16') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-16le' });
        return res.end(body);
      }
      if (kind === 'form') {
        res.writeHead(200, { 'content-type': ECHO_TYPES.form });
        return res.end(body);
      }
      const text = body.toString('utf8');
      const answer =
        kind === 'json'
          ? `{"url":"${url}","got":${text}}`
          : kind === 'xml'
            ? `<echo><url>${url}</url><got>${text}</got></echo>`
            : `${url}\n${text}`;
      res.writeHead(200, { 'content-type': ECHO_TYPES[kind] ?? 'text/plain' });
      res.end(answer);
    });
  });
  return { ...(await listenOnLoopback(server)), received };
}

export type EchoDownstream = Awaited<ReturnType<typeof startEcho>>;
