import { connect, Socket } from 'node:net';
import { Contract, contractOf, ContractViolation } from './contract';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  /** The body, de-chunked, decoded as `encoding` (named as HttpResult's text). */
  text: string;
}

/**
 * Sends bytes exactly as given over one plain socket (fetch and node:http refuse or normalise the
 * malformed paths and header bytes these tests need) and reads the whole answer. The request should
 * ask for `connection: close`, so the answer ends with the socket. The server may answer and close
 * before reading everything sent (413, 401): an answer that arrived counts, whatever happens after.
 */
export async function rawExchange(
  baseUrl: string,
  parts: Array<string | Buffer>,
  options: { encoding?: BufferEncoding; timeoutMs?: number; describe?: () => string } = {},
): Promise<RawResponse> {
  // Fetched before the request, as http() does; unreachable (not this service): no check.
  const contract = await contractOf(baseUrl).catch(() => null);
  const response = await exchange(baseUrl, parts, options);
  try {
    checkRaw(contract, parts, response);
  } catch (error) {
    if (!(error instanceof ContractViolation)) throw error;
    const describe = options.describe ?? (() => String(parts[0]).split('\r\n')[0].slice(0, 200));
    error.message += `\n  request: ${describe()}`;
    throw error;
  }
  return response;
}

/**
 * The answer held against the document as http() holds its answers. An answer without `x-request-id` is Node's
 * own HTTP server refusing the request before any route ran (bad bytes, a timeout, 431, 417): it is held against
 * the document's list of such answers, whatever the request line. Otherwise a request line whose target is no
 * path (`*`, an absolute URL) names no operation, and is not checked.
 */
function checkRaw(contract: Contract | null, parts: Array<string | Buffer>, response: RawResponse): void {
  if (!contract) return;
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) headers.set(name, value);
  if (response.headers['x-request-id'] === undefined) {
    contract.checkHttpLayer({ status: response.status, headers, text: response.text });
    return;
  }
  const [method, target] = String(parts[0]).split('\r\n')[0].split(' ');
  if (!method || !target?.startsWith('/')) return;
  // A `#` cannot be in a request target; the router reads the path up to it, and decodes percent-encoded
  // unreserved characters (RFC 3986, 6.2.2.2: `%2D` is `-`), so the check does too.
  const routed = target.split('#')[0].replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(char) ? char : escape;
  });
  contract.check({ method, target: routed, status: response.status, headers, text: response.text });
}

/** A raw connection that records what it got and when it was closed. */
export interface RawConnection {
  socket: Socket;
  bytes: () => Buffer;
  closed: () => boolean;
}

/**
 * A plain socket to `baseUrl` for a test that writes its own bytes (trickled headers, pipelined requests), from
 * `localAddress` if given; read its answers with checkedRawAnswers, and destroy it when done.
 */
export function openRaw(baseUrl: string, localAddress?: string): Promise<RawConnection> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let closed = false;
    const socket = connect({ port: Number(port), host: hostname, localAddress });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined); // a reset counts as closed
    socket.on('close', () => (closed = true));
    socket.once('connect', () => resolve({ socket, bytes: () => Buffer.concat(chunks), closed: () => closed }));
    socket.once('error', reject);
  });
}

/**
 * For a test that drives its own socket (a trickle of header lines, keep-alive): every whole answer in the bytes
 * it read, in order, each held against the document as rawExchange holds its answer. `requests[i]` is the request
 * (its first line is enough) that the i-th answer answers; a test that expects an answer must also check that
 * one came, since no answer is nothing to check.
 */
export async function checkedRawAnswers(baseUrl: string, requests: string[], bytes: Buffer): Promise<RawResponse[]> {
  const contract = await contractOf(baseUrl);
  if (!contract) throw new Error(`${baseUrl} serves no OpenAPI document to check its answers against`);
  const answers = parseRawResponses(bytes);
  if (answers.length > requests.length)
    throw new Error(
      `${answers.length} answers to ${requests.length} requests: ${bytes.toString('latin1').slice(0, 300)}`,
    );
  answers.forEach((answer, i) => {
    try {
      checkRaw(contract, [requests[i]], answer);
    } catch (error) {
      if (error instanceof ContractViolation) error.message += `\n  request: ${requests[i].split('\r\n')[0]}`;
      throw error;
    }
  });
  return answers;
}

/** Each whole answer in `bytes` (several on a keep-alive connection), framed by Content-Length or chunks. */
export function parseRawResponses(bytes: Buffer): RawResponse[] {
  const answers: RawResponse[] = [];
  let rest = bytes;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return answers;
    const head = parseHead(rest.subarray(0, end).toString('latin1'));
    const body = rest.subarray(end + 4);
    let next: Buffer;
    if (head.headers['transfer-encoding'] === 'chunked') {
      const chunked = dechunk(body);
      if (!chunked) return answers; // not whole yet
      answers.push({ ...head, text: chunked.body.toString('utf8') });
      next = body.subarray(chunked.consumed);
    } else {
      const length = Number(head.headers['content-length'] ?? body.length);
      if (body.length < length) return answers;
      answers.push({ ...head, text: body.subarray(0, length).toString('utf8') });
      next = body.subarray(length);
    }
    rest = next;
  }
}

/** A chunked body's bytes and how many bytes it took, trailers ignored; null while its last chunk has not come. */
function dechunk(bytes: Buffer): { body: Buffer; consumed: number } | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const line = bytes.indexOf('\r\n', at);
    if (line < 0) return null;
    const size = parseInt(bytes.subarray(at, line).toString('latin1'), 16);
    if (Number.isNaN(size)) throw new Error(`not a chunk size: ${bytes.subarray(at, line).toString('latin1')}`);
    if (size === 0) {
      const end = bytes.indexOf('\r\n\r\n', line);
      return end < 0 ? null : { body: Buffer.concat(parts), consumed: end + 4 };
    }
    if (bytes.length < line + 2 + size + 2) return null;
    parts.push(bytes.subarray(line + 2, line + 2 + size));
    at = line + 2 + size + 2;
  }
}

function parseHead(head: string): Omit<RawResponse, 'text'> {
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers };
}

function exchange(
  baseUrl: string,
  parts: Array<string | Buffer>,
  options: { encoding?: BufferEncoding; timeoutMs?: number; describe?: () => string },
): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const describe = options.describe ?? (() => String(parts[0]).split('\r\n')[0].slice(0, 200));
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(options.timeoutMs ?? 15_000, () =>
      socket.destroy(new Error(`no answer in time\n  request: ${describe()}`)),
    );
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error) => (chunks.length > 0 ? undefined : reject(error)));
    socket.on('close', () => {
      const response = parseRawResponse(Buffer.concat(chunks).toString(options.encoding ?? 'utf8'));
      if (response) resolve(response);
      else
        reject(
          new Error(
            `no HTTP answer (${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 200))})\n  request: ${describe()}`,
          ),
        );
    });
    // No half-close: Node's server drops a request whose client has ended its side (httpAllowHalfOpen).
    for (const part of parts) socket.write(part);
  });
}

/** Status line, headers (lower-case names) and de-chunked body of a whole HTTP/1.1 answer; null if none. */
export function parseRawResponse(text: string): RawResponse | null {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const { status, headers } = parseHead(text.slice(0, end));
  const body = text.slice(end + 4);
  return {
    status,
    headers,
    text: headers['transfer-encoding'] === 'chunked' ? unchunk(body) : body,
  };
}

function unchunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, line), 16);
    if (!size) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}
