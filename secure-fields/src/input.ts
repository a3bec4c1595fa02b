/**
 * A field frame: `input.html?parentOrigin=…&type=number|expiryDate|securityCode|postalCode[&font=…]
 * [&paymentMethodScheme=…]`. It shows one input, formats and checks what is typed, tells the page only flags
 * (valid, empty, autofilled), and hands the value to the controller frame of the same page, nothing else.
 */
import './input.css';
import {
  CHANNEL,
  INTERNAL_CHANNEL,
  isFieldType,
  messageOf,
  parentOriginOf,
  type FieldState,
  type FieldType,
} from './protocol';
import {
  caretAfter,
  formatExpiry,
  formatNumber,
  formatPostalCode,
  formatSecurityCode,
  securityCodeLengths,
  type Formatted,
} from './fields';
import { allowedStyles, fontOf, type StyleState } from './styles';
import { CONTROLLER_PATH, fromParent, fromSibling, postToParent, postToSibling, siblings } from './siblings';

const params = new URLSearchParams(window.location.search);
const parentOrigin = parentOriginOf(params.get('parentOrigin'));
const typeParam = params.get('type');

const ATTRIBUTES: Record<FieldType, { autocomplete: string; inputmode: string; label: string; name: string }> = {
  number: { autocomplete: 'cc-number', inputmode: 'numeric', label: 'Card number', name: 'cardnumber' },
  expiryDate: { autocomplete: 'cc-exp', inputmode: 'numeric', label: 'Expiry date', name: 'exp-date' },
  securityCode: { autocomplete: 'cc-csc', inputmode: 'numeric', label: 'Security code', name: 'cvc' },
  postalCode: { autocomplete: 'postal-code', inputmode: 'text', label: 'Postal code', name: 'postal' },
};

const SELECTORS: Record<StyleState, string> = {
  base: '#field',
  autofill: '#field:autofill',
  hover: '#field:hover',
  focus: '#field:focus',
  disabled: '#field:disabled',
  valid: '#field[data-valid="true"]',
  invalid: '#field[aria-invalid="true"]',
  placeholder: '#field::placeholder',
};

if (parentOrigin && isFieldType(typeParam) && window.parent !== window) start(parentOrigin, typeParam);

function start(parentOrigin: string, type: FieldType): void {
  const attributes = ATTRIBUTES[type];
  const label = document.createElement('label');
  label.htmlFor = 'field';
  label.id = 'label';
  label.className = 'visually-hidden';
  label.textContent = attributes.label;
  const input = document.createElement('input');
  input.id = 'field';
  input.type = 'text';
  input.name = attributes.name;
  input.autocomplete = attributes.autocomplete as AutoFill;
  input.inputMode = attributes.inputmode;
  input.spellcheck = false;
  input.setAttribute('autocorrect', 'off');
  input.setAttribute('autocapitalize', 'off');
  input.setAttribute('aria-labelledby', 'label');
  input.setAttribute('aria-invalid', 'false');
  input.setAttribute('aria-required', 'true');
  if (type === 'expiryDate') input.placeholder = 'MM/YY';
  document.body.append(label, input);

  const font = fontOf(params.get('font'));

  let scheme: string | undefined = params.get('paymentMethodScheme') ?? undefined;
  let lengths: number[] | undefined;
  let controller: Window | null = null;
  let current: Formatted = { text: '', value: '', valid: false };
  let autofilled = false;

  const format = (text: string, deleting: boolean): Formatted => {
    switch (type) {
      case 'number':
        return formatNumber(text);
      case 'expiryDate':
        return formatExpiry(text, new Date(), deleting);
      case 'securityCode':
        return formatSecurityCode(text, securityCodeLengths(scheme, lengths));
      case 'postalCode':
        return formatPostalCode(text);
    }
  };

  const state = (): FieldState => ({
    type,
    value: current.value,
    valid: current.valid,
    empty: input.value.length === 0,
    autofilled,
    ...(type === 'number' ? { scheme: current.scheme } : {}),
  });
  const flags = () => {
    const { valid, empty } = state();
    return { id: type, valid, empty, autofilled, ...(type === 'number' ? { scheme: current.scheme } : {}) };
  };

  const isController = (candidate: Window) => {
    try {
      return CONTROLLER_PATH.test(candidate.location.pathname);
    } catch {
      return false;
    }
  };
  const findController = (): Window | null =>
    siblings().find((sibling) => CONTROLLER_PATH.test(sibling.path))?.window ?? null;
  const tellController = () => {
    // A page that creates SecureFields again replaces the controller frame: the old one is gone.
    if (controller?.closed) controller = null;
    controller ??= findController();
    if (controller) postToSibling(controller, { channel: INTERNAL_CHANNEL, type: 'field-state', data: state() });
  };

  const apply = (deleting: boolean) => {
    const before = input.selectionStart ?? input.value.length;
    const atEnd = before >= input.value.length;
    const counts = type === 'postalCode' ? () => true : (c: string) => /\d/.test(c);
    const typedBefore = [...input.value.slice(0, before)].filter(counts).length;
    current = format(input.value, deleting);
    if (input.value !== current.text) {
      input.value = current.text;
      const caret = atEnd ? current.text.length : caretAfter(current.text, typedBefore, counts);
      if (document.activeElement === input) input.setSelectionRange(caret, caret);
    }
    const invalid = !current.valid && input.value.length > 0;
    input.setAttribute('aria-invalid', String(invalid));
    input.dataset.valid = String(current.valid);
  };

  input.addEventListener('input', (event) => {
    const inputType = event.inputType ?? '';
    try {
      autofilled = input.matches(':autofill') || inputType === 'insertReplacementText' || inputType === '';
    } catch {
      autofilled = inputType === 'insertReplacementText';
    }
    apply(inputType.startsWith('delete'));
    postToParent(parentOrigin, { channel: CHANNEL, type: 'input', data: flags() });
    tellController();
  });
  input.addEventListener('focus', () => postToParent(parentOrigin, { channel: CHANNEL, type: 'focus', data: flags() }));
  input.addEventListener('blur', () => postToParent(parentOrigin, { channel: CHANNEL, type: 'blur', data: flags() }));

  // Our own stylesheet (a file from this origin, loaded before the frame's load event, after which the library
  // sends its first update): page styles become declarations of rules added to it.
  const rules = new Map<StyleState, CSSStyleRule>();
  const ruleFor = (state: StyleState): CSSStyleRule | null => {
    const sheet = document.querySelector<HTMLLinkElement>('link[rel="stylesheet"]')?.sheet;
    if (!sheet) return null;
    let rule = rules.get(state);
    if (!rule) {
      try {
        const index = sheet.insertRule(`${SELECTORS[state]} {}`, sheet.cssRules.length);
        rule = sheet.cssRules[index] as CSSStyleRule;
        rules.set(state, rule);
      } catch {
        return null; // a selector this browser does not know (:autofill in an old one)
      }
    }
    return rule;
  };

  window.addEventListener('message', (event) => {
    const message = messageOf(event.data);
    if (!message) return;
    if (message.channel === CHANNEL && fromParent(event, parentOrigin)) {
      if (message.type !== 'update' || typeof message.data !== 'object' || message.data === null) return;
      const data = message.data as Record<string, unknown>;
      if (typeof data.label === 'string') label.textContent = data.label.slice(0, 100);
      if (typeof data.placeholder === 'string') input.placeholder = data.placeholder.slice(0, 100);
      if (Array.isArray(data.lengths) && type === 'securityCode') {
        lengths = data.lengths.filter((n): n is number => typeof n === 'number');
      }
      if (font) ruleFor('base')?.style.setProperty('font-family', `"${font}", system-ui, sans-serif`);
      for (const { state, property, value } of allowedStyles(data.styles)) {
        ruleFor(state)?.style.setProperty(property, value);
      }
      if (input.value) apply(false);
      return;
    }
    if (message.channel === INTERNAL_CHANNEL && fromSibling(event)) {
      if (message.type === 'controller-ready') {
        if (isController(event.source)) controller = event.source;
        tellController();
      } else if (message.type === 'collect' && isController(event.source)) {
        controller = event.source;
        tellController();
      } else if (message.type === 'scheme' && type === 'securityCode' && event.source === controller) {
        const next = (message.data as { scheme?: unknown } | undefined)?.scheme;
        if (typeof next === 'string' && next !== scheme && !params.get('paymentMethodScheme')) {
          scheme = next;
          apply(false);
          postToParent(parentOrigin, { channel: CHANNEL, type: 'input', data: flags() });
          tellController();
        }
      }
    }
  });

  tellController();
}
