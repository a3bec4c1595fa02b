/**
 * The messages of `@gr4vy/secure-fields` (read from its 2.2.6 build, docs/decisions/0141) and our own between
 * the frames. Pure: no DOM, so unit tests read it too.
 *
 * With the parent (the merchant's page), channel 'secure-fields':
 * - in, to a field: `update` {label, placeholder, styles: [['--color', 'red'], ['--focus-color', …]], lengths, type}
 * - in, to the controller: `submit` {method: 'card' | 'id'}, `method-change` (ignored)
 * - out, from a field: `input`, `focus`, `blur` {id: the field's type, valid, empty, autofilled}
 * - out, from the controller: `ready`, `form-change` {fields, complete}, one `success` or `error` per submit
 * Between the frames of one page, channel 'secure-fields-internal', never to another origin than our own.
 */
export const CHANNEL = 'secure-fields';
export const INTERNAL_CHANNEL = 'secure-fields-internal';

export type FieldType = 'number' | 'expiryDate' | 'securityCode' | 'postalCode';
export const FIELD_TYPES: readonly FieldType[] = ['number', 'expiryDate', 'securityCode', 'postalCode'];

export function isFieldType(value: unknown): value is FieldType {
  return typeof value === 'string' && (FIELD_TYPES as readonly string[]).includes(value);
}

export interface FieldFlags {
  valid: boolean;
  empty: boolean;
  autofilled: boolean;
}

/** What a field frame tells the controller of its own page: the value goes nowhere else. */
export interface FieldState extends FieldFlags {
  type: FieldType;
  value: string;
  /** The number field's scheme (Gr4vy's names), so the controller can tell the security code its length. */
  scheme?: string;
}

export type InternalMessage =
  | { channel: typeof INTERNAL_CHANNEL; type: 'field-state'; data: FieldState }
  | { channel: typeof INTERNAL_CHANNEL; type: 'controller-ready' }
  | { channel: typeof INTERNAL_CHANNEL; type: 'collect' }
  | { channel: typeof INTERNAL_CHANNEL; type: 'scheme'; data: { scheme: string } };

/** An object with a string `channel` and `type`: everything else that arrives is ignored. */
export function messageOf(data: unknown): { channel: string; type: string; data?: unknown } | null {
  if (typeof data !== 'object' || data === null) return null;
  const { channel, type } = data as { channel?: unknown; type?: unknown };
  if (typeof channel !== 'string' || typeof type !== 'string') return null;
  return data as { channel: string; type: string; data?: unknown };
}

/**
 * The parent's origin from the frame's query: an http(s) origin and nothing more (the library passes
 * `window.location.origin`, unencoded). Null when it is anything else; the frame then does nothing.
 */
export function parentOriginOf(value: string | null): string | null {
  if (!value) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  return url.origin === value ? value : null;
}

export interface FormChange {
  fields: Record<'number' | 'expiryDate' | 'securityCode', FieldFlags> & { postalCode?: FieldFlags };
  complete: boolean;
}

const ABSENT: FieldFlags = { valid: false, empty: true, autofilled: false };

/**
 * The `form-change` data from the fields the page has. Complete when every field the method needs is valid:
 * number and expiry for a new card, and every field the page shows.
 */
export function formChange(states: ReadonlyMap<FieldType, FieldFlags>, storedCard: boolean): FormChange {
  const flags = (type: FieldType): FieldFlags => {
    const state = states.get(type);
    return state ? { valid: state.valid, empty: state.empty, autofilled: state.autofilled } : { ...ABSENT };
  };
  const fields: FormChange['fields'] = {
    number: flags('number'),
    expiryDate: flags('expiryDate'),
    securityCode: flags('securityCode'),
  };
  if (states.has('postalCode')) fields.postalCode = flags('postalCode');
  const needed = new Set<FieldType>(states.keys());
  if (!storedCard) {
    needed.add('number');
    needed.add('expiryDate');
  } else {
    needed.delete('number');
    needed.delete('expiryDate');
  }
  const complete = needed.size > 0 && [...needed].every((type) => states.get(type)?.valid === true);
  return { fields, complete };
}

/** What an `error` to the parent carries, at the top level (the library hands the whole message on) and in data. */
export interface SubmitError {
  status: number;
  code: string;
  message: string;
}

/**
 * The error a failed PUT answered, from an RFC 9457 problem or Gr4vy's error body: `code`, else the last part of
 * `type` when it is a URI (or `type` itself when it is not Gr4vy's constant 'error'), `detail`, `message` or `title`.
 */
export function submitErrorOf(status: number, body: unknown): SubmitError {
  const problem = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const text = (value: unknown): string | undefined =>
    typeof value === 'string' && value.length > 0 ? value.slice(0, 500) : undefined;
  const type = text(problem.type);
  const typeCode = type && type !== 'error' ? (type.split(/[/#]/).filter(Boolean).pop() ?? type) : undefined;
  const code = text(problem.code) ?? typeCode ?? (status === 429 ? 'too_many_requests' : 'request_failed');
  const message = text(problem.detail) ?? text(problem.message) ?? text(problem.title) ?? `HTTP ${status}`;
  const reported = typeof problem.status === 'number' ? problem.status : status;
  return { status: reported, code, message };
}
