/** A merchant account id is a slug, as in the public API the spec comes from (`default`, `acme-eu`). */
export const MERCHANT_ACCOUNT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** A slug suggestion from a display name: "ACME Europe GmbH" → "acme-europe-gmbh". */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/g, '');
  return slug || 'merchant';
}
