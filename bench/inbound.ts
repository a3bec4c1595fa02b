/**
 * bench:forward's inbound rows (issue 50): a partner's request to `/vault-inbound/{route_id}/bookings`, a 1 KiB JSON
 * body with one card number and its expiry (mapped, so a new card can be stored), through a route with a
 * shared-secret caller whose upstream is the bench's echo server (an http address FORWARD_INSECURE_HOSTS allows),
 * signed with the bench merchant's webhook secret. Two rows: the same card every time (stored once, then found by
 * its fingerprint), and a new card in each request (a payment method stored per request). Beside them, the bare
 * proxy with the same body, in the same run: the ratios are printed against it.
 */
import type { ChildProcess } from 'node:child_process';
import { cardNumber } from '../test/factories/cards';
import { cpuPerRequest, LoadResult, postJson } from './support';

const BODY_BYTES = 1024;
/** A test card (Luhn-valid) no other row of the bench stores. */
const SAME_CARD = '6011111111111117';
const CALLER_HEADER = 'x-partner-key';
const CALLER_SECRET = 'bench-partner-secret-0123456789abcdef';

type Load = (
  url: string,
  headers: Record<string, string>,
  server: ChildProcess | null,
  body: string | (() => string),
) => Promise<LoadResult>;

export interface InboundSetup {
  api: string;
  apiProcess: ChildProcess;
  token: string;
  echoPort: number;
  proxyPort: number;
  proxyProcess: ChildProcess;
  load: Load;
  /** The run's database's commits and Redis's commands so far: what one inbound request costs them, as differences. */
  commits: () => Promise<number>;
  redisCommands: () => Promise<number>;
}

/** A booking of exactly BODY_BYTES bytes holding one card number and its expiry, padded. */
function inboundBody(number: string): string {
  const bare = { booking: 'B-1', card: { number, expiry: '12/30', holder: 'Ada Lovelace' }, padding: '' };
  const length = JSON.stringify(bare).length;
  return JSON.stringify({ ...bare, padding: 'x'.repeat(BODY_BYTES - length) });
}

/**
 * The route and the merchant's webhook secret through the API, then the bare proxy with the inbound body and the
 * two inbound rows; the rows to print and the lines that set them beside the proxy.
 */
export async function inboundRows(s: InboundSetup): Promise<{ rows: Record<string, LoadResult>; lines: string[] }> {
  await postJson(`${s.api}/vault-forward/webhook-secrets`, s.token, {});
  const route = await postJson(`${s.api}/vault-forward/inbound-routes`, s.token, {
    display_name: 'Bench partner',
    upstream_url: `http://127.0.0.1:${s.echoPort}/inbound`,
    caller_authentication: { kind: 'shared-secret', header: CALLER_HEADER, secret: CALLER_SECRET },
    field_mappings: { json: { expiration_date: '/card/expiry', cardholder_name: '/card/holder' } },
  });
  const entry = `${s.api}/vault-inbound/${route.id as string}/bookings`;
  const caller = { [CALLER_HEADER]: CALLER_SECRET };
  const same = inboundBody(SAME_CARD);
  if (Buffer.byteLength(same) !== BODY_BYTES) throw new Error(`inbound body is ${Buffer.byteLength(same)} bytes`);
  const proxyHeaders = {
    'x-vault-forward-url': `http://127.0.0.1:${s.echoPort}/inbound/bookings`,
    'x-vault-forward-http-method': 'POST',
  };

  const proxy = await s.load(`http://127.0.0.1:${s.proxyPort}/`, proxyHeaders, s.proxyProcess, same);
  await s.load(entry, caller, s.apiProcess, same); // unmeasured: the inbound path's steady state
  const [commitsBefore, redisBefore] = [await s.commits(), await s.redisCommands()];
  const startUs = process.hrtime.bigint() / 1000n;
  const sameCard = await s.load(entry, caller, s.apiProcess, same);
  // (in)'s window and requests in profile-self's form, for a profile of the API (BENCH_API_PROFILE).
  const window = `@${startUs}-${process.hrtime.bigint() / 1000n}/${sameCard.sent}`;
  const perRequest = async (count: () => Promise<number>, before: number) => ((await count()) - before) / sameCard.sent;
  const commits = await perRequest(s.commits, commitsBefore);
  const redis = await perRequest(s.redisCommands, redisBefore);
  const newCards = await s.load(entry, caller, s.apiProcess, () => inboundBody(cardNumber()));
  for (const [label, r] of [
    ['same card', sameCard],
    ['new cards', newCards],
  ] as const)
    if (r.non2xx + r.errors > 0) throw new Error(`inbound ${label}: ${r.non2xx} non-2xx, ${r.errors} errors`);

  const beside = (label: string, r: LoadResult) =>
    `(${label})/(b 1 KiB): requests/s ${(r.rps / proxy.rps).toFixed(2)}, p50 added ${(r.p50 - proxy.p50).toFixed(2)} ms, ` +
    `API CPU per request ${cpuPerRequest(r).toFixed(0)} µs (${(cpuPerRequest(r) / cpuPerRequest(proxy)).toFixed(1)}× ` +
    `the proxy's ${cpuPerRequest(proxy).toFixed(0)} µs)`;
  return {
    rows: {
      '(b 1 KiB) undici pass-through proxy, the inbound body': proxy,
      '(in) /vault-inbound, 1 KiB JSON, one card: the same card each time (found by fingerprint)': sameCard,
      '(in+new) /vault-inbound, 1 KiB JSON, one card: a new card each request (stored)': newCards,
    },
    lines: [
      beside('in', sameCard),
      beside('in+new', newCards),
      `(in) per request: ${commits.toFixed(2)} PostgreSQL commits, ${redis.toFixed(2)} Redis commands (all of the ` +
        `server's); profile window: ${window}`,
    ],
  };
}
