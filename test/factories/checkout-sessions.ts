import { http } from '../support/http';
import type { TestApp } from '../support/test-app';

/** A checkout session through the real route, with a card collected when `card` is given. */
export async function createCheckoutSession(
  t: TestApp,
  token: string,
  options: { expiresIn?: number; card?: { number: string; expiration_date: string; security_code: string } } = {},
): Promise<{ id: string; expires_at: string }> {
  const created = await http(t.url, '/checkout/sessions', {
    method: 'POST',
    token,
    body: options.expiresIn ? { expires_in: options.expiresIn } : {},
  });
  if (created.status !== 201) throw new Error(`checkout session not created: ${created.status} ${created.text}`);
  if (options.card) {
    const fields = await http(t.url, `/checkout/sessions/${created.body.id}/fields`, {
      method: 'PUT',
      token,
      body: { payment_method: { method: 'card', ...options.card } },
    });
    if (fields.status !== 200) throw new Error(`fields not set: ${fields.status} ${fields.text}`);
  }
  return created.body;
}
