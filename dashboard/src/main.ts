import './styles.css';
import { html, nothing } from 'lit';
import { currentSession, signOut } from './api';
import { View } from './ui';
import './pages/sign-in';
import './pages/help';
import './pages/merchants';
import './pages/merchant';
import './pages/authentications';
import './pages/buyers';
import './pages/cards';
import './pages/activity';
import './pages/inbound-routes';

interface Route {
  name: 'sign-in' | 'help' | 'merchants' | 'merchant' | 'authentications' | 'buyers' | 'cards' | 'activity' | 'inbound';
  merchant?: string;
  tab?: 'general' | 'vault-forwarding';
  configId?: string;
}

/** Hash routes, so the static server needs one document only. */
function parse(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const session = currentSession();
  if (parts[0] === 'help') return { name: 'help' };
  if (!session) return { name: 'sign-in' };
  if (parts[0] === 'merchants' && parts[1] && session.mode === 'instance') {
    if (parts[2] === 'vault-forwarding' && parts[3] && parts[4] === 'authentications')
      return { name: 'authentications', merchant: parts[1], configId: parts[3] };
    return {
      name: 'merchant',
      merchant: parts[1],
      tab: parts[2] === 'vault-forwarding' ? 'vault-forwarding' : 'general',
    };
  }
  if (parts[0] === 'configuration') {
    if (parts[1] === 'vault-forwarding' && parts[2] && parts[3] === 'authentications')
      return { name: 'authentications', configId: parts[2] };
    return { name: 'merchant', tab: parts[1] === 'vault-forwarding' ? 'vault-forwarding' : 'general' };
  }
  if (parts[0] === 'buyers') return { name: 'buyers' };
  if (parts[0] === 'cards') return { name: 'cards' };
  if (parts[0] === 'activity') return { name: 'activity' };
  if (parts[0] === 'inbound-routes') return { name: 'inbound' };
  return session.mode === 'instance' ? { name: 'merchants' } : { name: 'merchant', tab: 'vault-forwarding' };
}

export class VfApp extends View {
  static override properties = { route: { state: true }, actingFor: { state: true } };
  declare route: Route;
  /** Instance keys: the merchant account that Buyers, Stored cards and Activity act for. */
  declare actingFor: string;

  constructor() {
    super();
    this.route = parse(location.hash);
    this.actingFor = 'default';
    addEventListener('hashchange', () => this.navigated());
    this.addEventListener('signed-in', () => {
      const session = currentSession();
      location.hash = session?.mode === 'instance' ? '#/merchants' : '#/configuration/vault-forwarding';
      this.navigated();
    });
  }

  private navigated(): void {
    this.route = parse(location.hash);
    if (this.route.merchant) this.actingFor = this.route.merchant;
    // Keyboard and screen-reader users land on the new page's heading.
    void this.updateComplete.then(() => {
      const heading = this.querySelector<HTMLElement>('main h1');
      heading?.setAttribute('tabindex', '-1');
      heading?.focus();
      document.title = `${heading?.textContent?.trim() ?? 'Dashboard'} · Vault forwarding`;
    });
  }

  private signOut(): void {
    signOut();
    location.hash = '#/sign-in';
    this.navigated();
  }

  private link(href: string, text: string, active: boolean) {
    return html`<a href=${href} aria-current=${active ? 'page' : nothing}>${text}</a>`;
  }

  override render() {
    const session = currentSession();
    const r = this.route;
    const settings = r.name === 'merchants' || r.name === 'merchant' || r.name === 'authentications';
    const who =
      session?.mode === 'instance'
        ? 'Instance key'
        : `Merchant key${session?.ownMerchantId ? ` · ${session.ownMerchantId}` : ''}`;
    return html`
      <a
        class="skip"
        href="#main"
        @click=${(e: Event) => {
          e.preventDefault();
          this.querySelector<HTMLElement>('main h1')?.focus();
        }}
        >Skip to content</a
      >
      <header class="top">
        <span class="brand">Vault forwarding</span>
        ${
          session
            ? html`<nav aria-label="Main">
                  <span class="nav-group"
                    >Settings:
                    ${
                      session.mode === 'instance'
                        ? this.link('#/merchants', 'Merchants', settings)
                        : this.link('#/configuration/vault-forwarding', 'Configuration', settings)
                    }</span
                  >
                  ${this.link('#/buyers', 'Buyers', r.name === 'buyers')}
                  ${this.link('#/cards', 'Stored cards', r.name === 'cards')}
                  ${this.link('#/activity', 'Activity', r.name === 'activity')}
                  ${this.link('#/inbound-routes', 'Inbound routes', r.name === 'inbound')}
                  ${this.link('#/help', 'Help', r.name === 'help')}
                </nav>
                ${
                  session.mode === 'instance' &&
                  (r.name === 'buyers' || r.name === 'cards' || r.name === 'activity' || r.name === 'inbound')
                    ? html`<label class="acting"
                        >Merchant account
                        <input
                          name="acting-for"
                          .value=${this.actingFor}
                          @change=${(e: Event) => (this.actingFor = (e.target as HTMLInputElement).value.trim() || 'default')}
                      /></label>`
                    : nothing
                }
                <span class="who">${who}</span>
                <button type="button" class="link" @click=${() => this.signOut()}>Sign out</button>`
            : html`<nav aria-label="Main">
                ${this.link('#/sign-in', 'Sign in', r.name === 'sign-in')}
                ${this.link('#/help', 'Help', r.name === 'help')}
              </nav>`
        }
      </header>
      <main id="main">${this.page(r)}</main>
      <div id="announcer" class="visually-hidden" role="status" aria-live="polite"></div>
    `;
  }

  private page(r: Route) {
    const session = currentSession();
    const acting = session?.mode === 'instance' ? this.actingFor : null;
    switch (r.name) {
      case 'sign-in':
        return html`<vf-sign-in></vf-sign-in>`;
      case 'help':
        return html`<vf-help></vf-help>`;
      case 'merchants':
        return html`<vf-merchants></vf-merchants>`;
      case 'merchant':
        return html`<vf-merchant .merchant=${r.merchant ?? null} .tab=${r.tab ?? 'general'}></vf-merchant>`;
      case 'authentications':
        return html`<vf-authentications .merchant=${r.merchant ?? null} .configId=${r.configId!}></vf-authentications>`;
      case 'buyers':
        return html`<vf-buyers .merchant=${acting}></vf-buyers>`;
      case 'cards':
        return html`<vf-cards .merchant=${acting}></vf-cards>`;
      case 'activity':
        return html`<vf-activity .merchant=${acting}></vf-activity>`;
      case 'inbound':
        return html`<vf-inbound-routes .merchant=${acting}></vf-inbound-routes>`;
    }
  }
}
customElements.define('vf-app', VfApp);
