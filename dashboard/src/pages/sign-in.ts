import { html } from 'lit';
import { ApiError, DEFAULT_SCOPES, signIn } from '../api';
import { importKeyFile, KeyFileError, readToken } from '../keys';
import { describedBy, fieldMessage, problemAlert, View } from '../ui';

/**
 * Sign in with an API key file (tokens are then minted here, five minutes each) or a pasted token.
 * Nothing is stored: closing or reloading the tab signs out.
 */
export class VfSignIn extends View {
  static override properties = {
    error: { state: true },
    busy: { state: true },
    keyError: { state: true },
    tokenError: { state: true },
  };
  declare error: ApiError | Error | null;
  declare keyError: string | null;
  declare tokenError: string | null;
  declare busy: boolean;

  constructor() {
    super();
    this.error = null;
    this.keyError = null;
    this.tokenError = null;
    this.busy = false;
  }

  private async withKey(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const file = (form.elements.namedItem('key-file') as HTMLInputElement).files?.[0];
    const scopes = (form.elements.namedItem('scopes') as HTMLInputElement).value.split(/[\s,]+/).filter(Boolean);
    this.error = this.keyError = null;
    if (!file) {
      this.keyError = 'Choose the .pem file of an API key.';
      return;
    }
    this.busy = true;
    try {
      const signing = await importKeyFile(await file.text());
      (form.elements.namedItem('key-file') as HTMLInputElement).value = '';
      await signIn({ kind: 'key', signing, scopes: scopes.length ? scopes : DEFAULT_SCOPES });
      this.dispatchEvent(new CustomEvent('signed-in', { bubbles: true, composed: true }));
    } catch (error) {
      if (error instanceof KeyFileError) this.keyError = error.message;
      else this.error = error as Error;
    } finally {
      this.busy = false;
    }
  }

  private async withToken(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const field = form.elements.namedItem('token') as HTMLTextAreaElement;
    const token = field.value.trim().replace(/^Bearer\s+/i, '');
    this.error = this.tokenError = null;
    if (token.split('.').length !== 3) {
      this.tokenError = 'Paste a whole token: three parts separated by dots (the "token" value the CLI prints).';
      return;
    }
    const { expiresAt } = readToken(token);
    this.busy = true;
    try {
      await signIn({ kind: 'token', token });
      field.value = '';
      this.dispatchEvent(new CustomEvent('signed-in', { bubbles: true, composed: true }));
    } catch (error) {
      this.error = error as Error;
      if (error instanceof ApiError && error.status === 401 && expiresAt && expiresAt < Date.now() / 1000)
        this.tokenError = 'This token has expired: mint a new one.';
    } finally {
      this.busy = false;
    }
  }

  override render() {
    return html`
      <h1>Sign in</h1>
      <p>
        Use an API key of this service. The key stays in this browser tab’s memory and is gone when you close or reload
        it. <a href="#/help">How do I get a key?</a>
      </p>
      ${problemAlert(this.error)}
      <div class="columns">
        <form class="card" @submit=${this.withKey} aria-labelledby="with-key">
          <h2 id="with-key">With an API key file</h2>
          <label for="key-file">API key file (PEM)</label>
          <input
            id="key-file"
            name="key-file"
            type="file"
            accept=".pem,application/x-pem-file,text/plain"
            aria-describedby=${describedBy('key-file-help', this.keyError && 'key-file-error')}
            aria-invalid=${this.keyError ? 'true' : 'false'}
          />
          <p class="help" id="key-file-help">
            The file written by <code>api-key create --out FILE</code>. Short-lived tokens (5 minutes) are signed with
            it here; the file is not uploaded.
          </p>
          ${fieldMessage('key-file-error', this.keyError)}
          <label for="scopes">Scopes</label>
          <input id="scopes" name="scopes" value=${DEFAULT_SCOPES.join(', ')} aria-describedby="scopes-help" />
          <p class="help" id="scopes-help">Comma-separated, as in <code>token --scopes</code>.</p>
          <button type="submit" ?disabled=${this.busy}>Sign in with key</button>
        </form>
        <form class="card" @submit=${this.withToken} aria-labelledby="with-token">
          <h2 id="with-token">With an access token</h2>
          <label for="token">Access token</label>
          <textarea
            id="token"
            name="token"
            rows="5"
            autocomplete="off"
            spellcheck="false"
            aria-describedby=${describedBy('token-help', this.tokenError && 'token-error')}
            aria-invalid=${this.tokenError ? 'true' : 'false'}
          ></textarea>
          <p class="help" id="token-help">
            From <code>npm run --silent cli -- token …</code>. It works until it expires (at most an hour).
          </p>
          ${fieldMessage('token-error', this.tokenError)}
          <button type="submit" ?disabled=${this.busy}>Sign in with token</button>
        </form>
      </div>
    `;
  }
}
customElements.define('vf-sign-in', VfSignIn);
