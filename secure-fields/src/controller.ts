/**
 * The controller frame: `controller.html?parentOrigin=…&sessionId=…&gr4vyId=…&environment=…[&paymentMethodId=…]`.
 * It holds the values the field frames of its own page hand it, tells the page `form-change` (flags only), and on
 * `submit` sends them in one same-origin PUT to /checkout/sessions/{id}/fields, answering exactly one `success` or
 * `error`. The values leave this origin in that PUT only.
 */
import {
  CHANNEL,
  formChange,
  INTERNAL_CHANNEL,
  isFieldType,
  messageOf,
  parentOriginOf,
  submitErrorOf,
  type FieldState,
  type FieldType,
  type SubmitError,
} from './protocol';
import { fromParent, fromSibling, postToParent, postToSibling, siblings } from './siblings';

const params = new URLSearchParams(window.location.search);
const parentOrigin = parentOriginOf(params.get('parentOrigin'));
const sessionId = params.get('sessionId');
const paymentMethodId = params.get('paymentMethodId') || null;

if (parentOrigin && sessionId && window.parent !== window) start(parentOrigin, sessionId);

function start(parentOrigin: string, sessionId: string): void {
  const fields = new Map<FieldType, { state: FieldState; window: Window }>();
  let scheme: string | undefined;
  let queue: Promise<void> = Promise.resolve();

  const emitFormChange = () => {
    const states = new Map([...fields].map(([type, field]) => [type, field.state]));
    postToParent(parentOrigin, { channel: CHANNEL, type: 'form-change', data: formChange(states, !!paymentMethodId) });
  };

  const receive = (source: Window, data: unknown) => {
    if (typeof data !== 'object' || data === null) return;
    const state = data as Partial<FieldState>;
    if (!isFieldType(state.type) || typeof state.value !== 'string' || state.value.length > 32) return;
    const known = fields.get(state.type);
    // One window per field type: a second frame claiming a type already held is ignored while the first lives.
    if (known && known.window !== source && !known.window.closed && siblingsInclude(known.window)) return;
    fields.set(state.type, {
      window: source,
      state: {
        type: state.type,
        value: state.value,
        valid: state.valid === true,
        empty: state.empty === true,
        autofilled: state.autofilled === true,
        scheme: typeof state.scheme === 'string' ? state.scheme : undefined,
      },
    });
    if (state.type === 'number' && state.scheme !== scheme) {
      scheme = typeof state.scheme === 'string' ? state.scheme : undefined;
      tellSecurityCode();
    }
    if (state.type === 'securityCode' && scheme) tellSecurityCode();
    emitFormChange();
    for (const waiter of [...answered]) waiter(state.type);
  };

  const tellSecurityCode = () => {
    const field = fields.get('securityCode');
    if (field && scheme && scheme !== 'unknown') {
      postToSibling(field.window, { channel: INTERNAL_CHANNEL, type: 'scheme', data: { scheme } });
    }
  };

  /**
   * Before a submit, every field is asked for its state and the answers awaited (at most a second): a state posted
   * by the field's last keystroke may still be on its way when the page's submit arrives (the two come from
   * different frames), and a field answers only after it has handled what was typed before.
   */
  const answered = new Set<(type: FieldType) => void>();
  const refresh = () =>
    new Promise<void>((resolve) => {
      const pending = new Set(fields.keys());
      if (pending.size === 0) return resolve();
      const done = () => {
        clearTimeout(timer);
        answered.delete(onState);
        resolve();
      };
      const onState = (type: FieldType) => {
        pending.delete(type);
        if (pending.size === 0) done();
      };
      const timer = setTimeout(done, 1_000);
      answered.add(onState);
      for (const field of fields.values()) postToSibling(field.window, { channel: INTERNAL_CHANNEL, type: 'collect' });
    });

  const fail = (error: SubmitError) =>
    postToParent(parentOrigin, { channel: CHANNEL, type: 'error', ...error, data: error });

  const submit = async (method: 'card' | 'id') => {
    await refresh();
    const value = (type: FieldType) => fields.get(type)?.state;
    const securityCode = value('securityCode');
    const needed: FieldType[] = method === 'card' ? ['number', 'expiryDate', 'securityCode'] : ['securityCode'];
    const invalid = needed.filter((type) => !value(type)?.valid && (type !== 'securityCode' || securityCode));
    if (method === 'id' && !paymentMethodId) {
      return fail({ status: 400, code: 'invalid_card_data', message: 'No stored payment method was given' });
    }
    const paymentMethod: Record<string, string> =
      method === 'id'
        ? { method: 'id', id: paymentMethodId ?? '' }
        : { method: 'card', number: value('number')?.value ?? '', expiration_date: value('expiryDate')?.value ?? '' };
    if (invalid.length > 0) {
      return fail({
        status: 400,
        code: 'invalid_card_data',
        message: `Missing or invalid: ${invalid.join(', ')}`,
      });
    }
    if (securityCode) paymentMethod.security_code = securityCode.value;
    let response: Response;
    try {
      response = await fetch(`/checkout/sessions/${encodeURIComponent(sessionId)}/fields`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'x-secure-fields-parent-origin': parentOrigin },
        body: JSON.stringify({ payment_method: paymentMethod }),
        cache: 'no-store',
        credentials: 'omit',
        referrerPolicy: 'no-referrer',
      });
    } catch {
      return fail({ status: 0, code: 'network_error', message: 'The secure fields service could not be reached' });
    }
    const body: unknown = await response.json().catch(() => null);
    if (response.ok) {
      postToParent(parentOrigin, { channel: CHANNEL, type: 'success', data: body ?? {} });
    } else {
      fail(submitErrorOf(response.status, body));
    }
  };

  window.addEventListener('message', (event) => {
    const message = messageOf(event.data);
    if (!message) return;
    if (message.channel === CHANNEL && fromParent(event, parentOrigin)) {
      if (message.type !== 'submit') return; // 'method-change' and the rest: nothing to do
      const asked = (message.data as { method?: unknown } | undefined)?.method;
      const method = asked === 'id' || (asked === undefined && paymentMethodId) ? 'id' : 'card';
      // One answer per submit, in order: a second submit waits for the first's answer.
      queue = queue.then(() => submit(method)).catch(() => undefined);
      return;
    }
    if (message.channel === INTERNAL_CHANNEL && fromSibling(event) && message.type === 'field-state') {
      receive(event.source, message.data);
    }
  });

  const siblingsInclude = (target: Window) => siblings().some((sibling) => sibling.window === target);

  // Fields that loaded before us find no controller: we greet every frame of ours under the same parent.
  for (const sibling of siblings()) {
    postToSibling(sibling.window, { channel: INTERNAL_CHANNEL, type: 'controller-ready' });
  }
  postToParent(parentOrigin, { channel: CHANNEL, type: 'ready' });
}
