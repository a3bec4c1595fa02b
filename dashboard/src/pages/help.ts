import { html } from 'lit';
import { View } from '../ui';

/** How to get a key: the CLI commands of the README's quick start. */
export class VfHelp extends View {
  override render() {
    return html`
      <h1>Getting an API key</h1>
      <p>
        The dashboard signs in with the same API keys as any client. Keys are made with the service’s CLI, in the
        directory where the service runs. The private key goes to a file (mode 0600); the service keeps only the public
        key.
      </p>
      <h2>An instance key (all merchant accounts)</h2>
      <p>Use it for Settings → Merchants.</p>
      <pre><code>npm run --silent cli -- api-key create --instance --out instance.pem</code></pre>
      <h2>A merchant key (one merchant account)</h2>
      <p>Use it for Settings → Configuration of that merchant account.</p>
      <pre><code>npm run --silent cli -- merchant create --name "Default" --id default
npm run --silent cli -- api-key create --merchant default --out default.pem</code></pre>
      <h2>Signing in</h2>
      <ul>
        <li>
          <strong>With the key file</strong>: choose the <code>.pem</code> file on the sign-in page. The page signs
          short-lived tokens with it (ES512 or ES256, key id = the key’s thumbprint). It is kept in this tab’s memory
          only.
        </li>
        <li>
          <strong>With a token</strong>: paste the token printed by
          <code>npm run --silent cli -- token --key default.pem --key-id &lt;id&gt; --scopes '*.read,*.write'</code>.
        </li>
      </ul>
      <h2>Scopes the pages use</h2>
      <ul>
        <li>
          Merchants: <code>merchant-accounts.read</code>, <code>merchant-accounts.write</code> (instance keys only)
        </li>
        <li>
          Vault Forwarding: <code>vault-forward-configs.read/.write</code>,
          <code>vault-forward-authentications.read/.write</code>
        </li>
        <li>Buyers: <code>buyers.read</code>; Activity: <code>vault-forwards.read</code></li>
      </ul>
      <p>
        Revoke a key with <code>npm run --silent cli -- api-key revoke &lt;id&gt;</code> or
        <code>DELETE /api-keys/{id}</code>. What that takes depends on the setup: with Redis (<code>REDIS_URL</code>)
        every API process drops the key and its tokens within milliseconds; without it (a plain <code>npm start</code>)
        the API process that revokes drops them at once, but a revocation made by the CLI, another process, reaches the
        running API when its caches expire, so the key's tokens keep working for up to 60 seconds.
      </p>
      <p><a href="#/sign-in">Back to sign in</a></p>
    `;
  }
}
customElements.define('vf-help', VfHelp);
