/**
 * A false-positive corpus for the card-number detector: ordinary values of payment payloads and logs, none a
 * card number, generated deterministically (a seeded generator: the same values on every run).
 */

/** mulberry32: a small seeded generator, [0, 1). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface OrdinaryValue {
  kind: string;
  text: string;
}

/** `perKind` values of each kind (at least 1,000 in all from 60 on). */
export function ordinaryValues(perKind = 60, seed = 45): OrdinaryValue[] {
  const random = seeded(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]) => items[int(0, items.length - 1)];
  const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[int(0, 15)]).join('');
  const digits = (n: number) => Array.from({ length: n }, () => String(int(0, 9))).join('');
  const base62 = (n: number) =>
    Array.from({ length: n }, () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'[int(0, 61)]).join(
      '',
    );
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  // 2015-01-01 to 2034-12-31, in milliseconds.
  const ms = () => int(1_420_070_400_000, 2_051_222_399_999);
  const iso = () => new Date(ms()).toISOString();
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`;
  const names = [
    'CheckoutSessions',
    'ConfigRecordBodies',
    'AddLedger',
    'Buyers',
    'PaymentMethods',
    'DisclosureBudgets',
  ];
  const makers: Record<string, () => string> = {
    'ms timestamp': () => String(ms()),
    'ms timestamp in JSON': () => `{"created_at":${ms()},"updated_at":${ms()}}`,
    's timestamp': () => `ts=${Math.floor(ms() / 1000)}`,
    'µs timestamp': () => `"t_us": ${ms()}${digits(3)}`,
    'ns timestamp': () => `time_unix_nano=${ms()}${digits(6)}`,
    'ISO date': () => iso(),
    'date and time': () =>
      iso()
        .replace('T', ' ')
        .replace('Z', ` +${pad(int(0, 12))}:00`),
    'dates, European': () =>
      `${pad(int(1, 28))}/${pad(int(1, 12))}/${int(2015, 2034)} ${pad(int(0, 23))}:${pad(int(0, 59))}`,
    UUID: () => uuid(),
    'UUID in a path': () => `/vault-forward/requests/${uuid()}/attempts/${int(1, 20)}`,
    'order id': () =>
      pick([
        `ORD-${int(2015, 2034)}-${digits(6)}`,
        `order_${digits(8)}`,
        `INV/${int(2015, 2034)}/${pad(int(1, 12))}/${digits(6)}`,
        `#${digits(int(6, 11))}`,
      ]),
    'PSP id': () => `${pick(['pi_', 'ch_', 'pm_', 'cus_', 'txn_'])}${base62(24)}`,
    amount: () =>
      pick([
        `${int(0, 99999)}.${pad(int(0, 99))}`,
        `EUR ${int(1, 999)},${digits(3)},${digits(3)}.${digits(2)}`,
        `{"amount":${int(1, 10_000_000)},"currency":"${pick(['EUR', 'USD', 'GBP'])}"}`,
      ]),
    'phone number': () =>
      pick([
        `+1 (${digits(3)}) 555-${digits(4)}`,
        `+44 20 ${digits(4)} ${digits(4)}`,
        `+33 ${int(1, 9)} ${digits(2)} ${digits(2)} ${digits(2)} ${digits(2)}`,
        `+49 ${digits(3)} ${digits(7)}`,
        `+1${digits(10)}`,
      ]),
    'IPv4 address': () => `${int(1, 255)}.${int(0, 255)}.${int(0, 255)}.${int(0, 255)}:${int(1, 65535)}`,
    'IPv6 address': () => `2001:db8:${hex(4)}:${hex(4)}::${hex(4)}`,
    version: () =>
      pick([
        `v${int(0, 20)}.${int(0, 30)}.${int(0, 200)}`,
        `${int(6, 11)}.${int(0, 9)}.${int(10000, 26000)}.${int(1, 9999)}`,
        `node/${int(18, 24)}.${int(0, 20)}.${int(0, 9)}`,
      ]),
    'JSON array of small numbers': () => `[${Array.from({ length: int(3, 24) }, () => int(0, 999)).join(',')}]`,
    'JSON array of small numbers, spaced': () => `[${Array.from({ length: int(3, 24) }, () => int(0, 99)).join(', ')}]`,
    'JSON array of years': () => `{"years":[${Array.from({ length: int(2, 6) }, () => int(1990, 2034)).join(',')}]}`,
    'name with numbers': () =>
      pick([
        `Room ${int(1, 9999)}, Building ${int(1, 40)}`,
        `Flight LH${int(100, 9999)} seat ${int(1, 60)}C`,
        `Apartment ${int(1, 300)}B, ${int(1, 9999)} Main Street`,
        `Invoice for Q${int(1, 4)} ${int(2015, 2034)}`,
      ]),
    'migration name': () => `Migration ${pick(names)}${ms()} has been executed successfully.`,
    'migration file': () => `${ms()}-${pick(names)}.ts`,
    'trace id': () => hex(32),
    traceparent: () => `00-${hex(32)}-${hex(16)}-01`,
    'span id': () => `"span_id":"${hex(16)}"`,
    'SHA-256': () => hex(64),
    'base64 token': () => base62(int(20, 60)),
    'log line': () =>
      `[${iso()}] INFO ${int(1000, 99999)} --- request ${uuid()} took ${int(1, 5000)} ms, status ${pick([200, 201, 404, 502])}`,
    'query string': () => `page=${int(1, 500)}&limit=${pick([10, 20, 50, 100])}&created_after=${ms()}&sort=-created_at`,
    IBAN: () => `DE${digits(2)} ${digits(4)} ${digits(4)} ${digits(4)} ${digits(4)} ${digits(2)}`,
    'postal address': () =>
      `${int(1, 999)} ${pick(['Rue de Rivoli', 'Baker Street', 'Hauptstraße'])}, ${digits(5)} ${pick(['Paris', 'London', 'Berlin'])}`,
  };
  const out: OrdinaryValue[] = [];
  for (const [kind, make] of Object.entries(makers)) for (let i = 0; i < perKind; i++) out.push({ kind, text: make() });
  return out;
}
