/**
 * The styles a page may give a field: the library flattens its `styles` option into custom-property tuples
 * (`{color: 'red', ':focus': {fontSize: '16px'}}` → [['--color', 'red'], ['--focus-font-size', '16px']]); we take
 * a tuple only when its state and property are on our lists and its value holds nothing that could load or run
 * anything. Pure; the input frame applies what passes through the CSSOM (CSSStyleRule.style.setProperty).
 */

/** The library's documented properties (SupportedCSSProperties, in CSS names), and the borders of the input. */
const PROPERTIES = new Set([
  'background-color',
  'border',
  'border-color',
  'border-radius',
  'border-style',
  'border-width',
  'box-shadow',
  'caret-color',
  'color',
  'color-scheme',
  'cursor',
  'font',
  'font-family',
  'font-feature-settings',
  'font-kerning',
  'font-size',
  'font-size-adjust',
  'font-stretch',
  'font-style',
  'font-variant',
  'font-variant-alternates',
  'font-variant-caps',
  'font-variant-east-asian',
  'font-variant-ligatures',
  'font-variant-numeric',
  'font-variation-settings',
  'font-weight',
  'letter-spacing',
  'line-height',
  'opacity',
  'padding',
  'padding-bottom',
  'padding-left',
  'padding-right',
  'padding-top',
  'text-align',
  'text-shadow',
  'text-rendering',
  'transition',
  'moz-osx-font-smoothing',
  'webkit-font-smoothing',
]);

/** The library's vendor-prefixed names lose their leading dash on the way: they are put back. */
const VENDOR = new Map([
  ['moz-osx-font-smoothing', '-moz-osx-font-smoothing'],
  ['webkit-font-smoothing', '-webkit-font-smoothing'],
]);

/** The states the library names (':focus' → 'focus-'), and the selector each is applied under. */
export type StyleState = 'base' | 'autofill' | 'hover' | 'focus' | 'disabled' | 'valid' | 'invalid' | 'placeholder';
const STATES: readonly StyleState[] = ['autofill', 'hover', 'focus', 'disabled', 'invalid', 'valid', 'placeholder'];

/** Families a page may name: generic and web-safe ones, and Google Fonts families (loaded, if at all, from gstatic). */
export const FONT_FAMILIES = new Set(
  [
    'serif',
    'sans-serif',
    'monospace',
    'system-ui',
    'ui-sans-serif',
    'ui-serif',
    'ui-monospace',
    '-apple-system',
    'blinkmacsystemfont',
    'arial',
    'helvetica',
    'helvetica neue',
    'verdana',
    'tahoma',
    'trebuchet ms',
    'georgia',
    'times new roman',
    'courier new',
    'segoe ui',
    'roboto',
    'open sans',
    'lato',
    'montserrat',
    'inter',
    'poppins',
    'source sans pro',
    'source sans 3',
    'noto sans',
    'nunito',
    'raleway',
    'ubuntu',
    'work sans',
    'pt sans',
    'rubik',
    'dm sans',
    'ibm plex sans',
  ].map((family) => family.toLowerCase()),
);

/** Anything that could fetch, run or escape a declaration. */
const FORBIDDEN = /url\(|image\(|image-set\(|expression\(|@import|javascript:|\\|<|>|;|\{|\}|\/\*|var\(|env\(|attr\(/i;

export interface StyleDeclaration {
  state: StyleState;
  property: string;
  value: string;
}

/** A family list whose every member is allow-listed (quotes around names are allowed). */
export function fontFamiliesAllowed(value: string): boolean {
  const families = value.split(',').map((f) =>
    f
      .trim()
      .replace(/^(['"])(.*)\1$/, '$2')
      .toLowerCase(),
  );
  return families.length > 0 && families.every((family) => FONT_FAMILIES.has(family));
}

/** The `font` shorthand's families: what follows its size (and optional /line-height). */
function shorthandFamiliesAllowed(value: string): boolean {
  const match =
    /(?:^|\s)(?:\d*\.?\d+(?:px|pt|em|rem|%|vw|vh)|x?x-small|small|medium|large|x?x-large|smaller|larger)(?:\s*\/\s*\S+)?\s+(.+)$/i.exec(
      value,
    );
  return match !== null && fontFamiliesAllowed(match[1]);
}

export function valueAllowed(property: string, value: string): boolean {
  if (value.length === 0 || value.length > 200 || FORBIDDEN.test(value)) return false;
  // Printable ASCII only: no escapes in another script, no control characters.
  if (!/^[\x20-\x7e]+$/.test(value)) return false;
  if (property === 'font-family') return fontFamiliesAllowed(value);
  if (property === 'font') return shorthandFamiliesAllowed(value);
  return true;
}

/** The declarations that pass, from the library's tuples; everything else is dropped silently. */
export function allowedStyles(tuples: unknown): StyleDeclaration[] {
  if (!Array.isArray(tuples)) return [];
  const out: StyleDeclaration[] = [];
  for (const tuple of tuples.slice(0, 200)) {
    if (!Array.isArray(tuple) || tuple.length !== 2) continue;
    const [name, raw] = tuple as unknown[];
    if (typeof name !== 'string' || !name.startsWith('--')) continue;
    if (typeof raw !== 'string' && typeof raw !== 'number') continue;
    const value = String(raw).trim();
    let rest = name.slice(2);
    let state: StyleState = 'base';
    if (!PROPERTIES.has(rest)) {
      const found = STATES.find((s) => rest.startsWith(`${s}-`));
      if (!found) continue;
      state = found;
      rest = rest.slice(found.length + 1);
    }
    if (!PROPERTIES.has(rest) || !valueAllowed(rest, value)) continue;
    out.push({ state, property: VENDOR.get(rest) ?? rest, value });
  }
  return out;
}

/** The font the library passes in the frame's URL (`&font=Open+Sans`), when allow-listed. */
export function fontOf(param: string | null): string | null {
  if (!param) return null;
  const family = param.replace(/\+/g, ' ').trim();
  return /^[A-Za-z0-9 -]{1,50}$/.test(family) && FONT_FAMILIES.has(family.toLowerCase()) ? family : null;
}
