#!/usr/bin/env node
// A merchant's shop that collects cards through Secure Fields and never holds one (docs/secure-fields.md):
//   1. GET /          its server creates a checkout session (POST /checkout/sessions with the merchant's token)
//                     and renders a page whose fields are frames of the vault's secure-fields origin, driven by
//                     Gr4vy's own @gr4vy/secure-fields library, unmodified;
//   2. the page       submit() puts the card into the session from the frames; the page only hears "success";
//   3. POST /pay      its server forwards to the payment provider with x-vault-forward-checkout-session: the
//                     vault fills the number, expiry and security code, and erases the code once answered.
// Environment: TOKEN (a merchant token, README step 2), API (http://127.0.0.1:3000), SECURE_FIELDS_ORIGIN
// (http://secure-fields.localhost:3000), TARGET (where /pay forwards, required: the README's stand-in,
// http://$STANDIN_HOST/payments), SHOP_PORT (8090). The shop's origin, http://shop.localhost:SHOP_PORT, must be
// among the merchant's secure_fields_origins (README, "Secure Fields").
'use strict';
const { createServer } = require('node:http');
const { readFileSync } = require('node:fs');

const TOKEN = process.env.TOKEN;
const API = process.env.API ?? 'http://127.0.0.1:3000';
const PORT = Number(process.env.SHOP_PORT ?? 8090);
const FRAMES = process.env.SECURE_FIELDS_ORIGIN ?? `http://secure-fields.localhost:${new URL(API).port || 80}`;
const TARGET = process.env.TARGET;
if (!TOKEN) {
  console.error('TOKEN is not set: a merchant token (README, step 2)');
  process.exit(2);
}
// No default: a fixed port could be any program's server, and /pay sends it the card.
if (!TARGET) {
  console.error('TARGET is not set: where /pay forwards, e.g. http://$STANDIN_HOST/payments (README, step 4)');
  process.exit(2);
}
// The library's browser build (UMD: window.SecureFields), served as it is published.
const LIBRARY = readFileSync(require.resolve('@gr4vy/secure-fields'));

async function api(method, path, body, headers = {}) {
  const response = await fetch(`${API}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.text() };
}

const page = (sessionId) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<meta name="secure-fields" content="${FRAMES}" data-session="${sessionId}">
<script src="/secure-fields.js"></script><script src="/page.js" defer></script></head>
<body><h1>Pay 10.00 EUR</h1>
<label for="cc-number">Card number</label><div id="cc-number"></div>
<label for="cc-expiry">Expiry date</label><div id="cc-expiry"></div>
<label for="cc-cvv">Security code</label><div id="cc-cvv"></div>
<button id="pay" disabled>Pay</button><p id="status" role="status"></p></body></html>`;

// The page's own script: it sees whether the form is complete and the outcome, never a card value.
const PAGE_JS = `
const meta = document.querySelector('meta[name="secure-fields"]');
window.SECURE_FIELDS_FRAME_URL = meta.content;
const sessionId = meta.dataset.session;
const { SecureFields } = window;
const fields = new SecureFields({ gr4vyId: 'shop', environment: 'sandbox', sessionId });
fields.addCardNumberField('#cc-number', { styles: { fontSize: '16px' } });
fields.addExpiryDateField('#cc-expiry');
fields.addSecurityCodeField('#cc-cvv');
const pay = document.querySelector('#pay');
const status = document.querySelector('#status');
fields.addEventListener(SecureFields.Events.FORM_CHANGE, (data) => { pay.disabled = !data.complete; });
fields.addEventListener(SecureFields.Events.CARD_VAULT_SUCCESS, async () => {
  const paid = await fetch('/pay', { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId }) });
  status.textContent = paid.ok ? 'Paid' : 'Payment failed (' + paid.status + ')';
});
fields.addEventListener(SecureFields.Events.CARD_VAULT_FAILURE, (data) => {
  status.textContent = 'Card not accepted: ' + data.code + ' (' + data.status + ')';
});
pay.addEventListener('click', () => fields.submit());
`;

function send(res, status, type, body) {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    try {
      if (req.method === 'GET' && req.url === '/') {
        const session = await api('POST', '/checkout/sessions', {});
        if (session.status !== 201) return send(res, 502, 'text/plain', `no session: ${session.body}`);
        return send(res, 200, 'text/html; charset=utf-8', page(JSON.parse(session.body).id));
      }
      if (req.method === 'GET' && req.url === '/secure-fields.js') return send(res, 200, 'text/javascript', LIBRARY);
      if (req.method === 'GET' && req.url === '/page.js') return send(res, 200, 'text/javascript', PAGE_JS);
      if (req.method === 'POST' && req.url === '/pay') {
        const { sessionId } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const forwarded = await api(
          'POST',
          '/vault-forward',
          {
            amount: 1000,
            currency: 'EUR',
            card: {
              number: '{{ CARD_NUMBER_1 }}',
              expiry: '{{ CARD_EXPIRATION_DATE_1 }}',
              cvv: '{{ CARD_SECURITY_CODE_1 }}',
            },
          },
          {
            'x-vault-forward-url': TARGET,
            'x-vault-forward-http-method': 'POST',
            'x-vault-forward-checkout-session': sessionId,
          },
        );
        // The provider's answer stays on the server (a stand-in that echoes would echo the card: the config's
        // unmatched_pan masks it); the page learns the outcome only.
        console.log(`forwarded for session ${sessionId}: ${forwarded.status}`);
        return send(
          res,
          forwarded.status === 200 ? 200 : 502,
          'application/json',
          JSON.stringify({ status: forwarded.status }),
        );
      }
      send(res, 404, 'text/plain', 'not found');
    } catch (error) {
      send(res, 500, 'text/plain', String(error.message));
    }
  });
});
server.listen(PORT, '127.0.0.1', () =>
  console.log(`shop on http://shop.localhost:${server.address().port} (frames from ${FRAMES})`),
);
