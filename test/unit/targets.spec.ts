import { BlockedAddressError, literalAddress } from '../../src/modules/forwarding-setup/targets/addresses';
import { hostKey, isInsecureHost } from '../../src/modules/forwarding-setup/targets/http-methods';

describe('target host keys and FORWARD_INSECURE_HOSTS', () => {
  it('hostKey: lower-case host, the port unless it is 443 (https default) — the form of a config’s hosts', () => {
    expect(hostKey(new URL('https://PSP.Example.com/pay'))).toBe('psp.example.com');
    expect(hostKey(new URL('https://psp.example.com:443/pay'))).toBe('psp.example.com');
    expect(hostKey(new URL('https://psp.example.com:8443/pay'))).toBe('psp.example.com:8443');
    // http's default port is 80, which is written out: a config entry without a port means 443.
    expect(hostKey(new URL('http://Psp.Example.com/pay'))).toBe('psp.example.com:80');
    expect(hostKey(new URL('http://127.0.0.1:8080/x'))).toBe('127.0.0.1:8080');
    expect(hostKey(new URL('http://psp.example.com:443/x'))).toBe('psp.example.com');
    expect(hostKey(new URL('https://[::1]:9000/x'))).toBe('[::1]:9000');
  });

  it('isInsecureHost: an exact host:port entry, or a bare host covering every port; nothing else', () => {
    const hosts = new Set(['127.0.0.1', 'mock.local:8080']);
    expect(isInsecureHost(hosts, '127.0.0.1:8080')).toBe(true);
    expect(isInsecureHost(hosts, '127.0.0.1:1')).toBe(true);
    expect(isInsecureHost(hosts, '127.0.0.1')).toBe(true);
    expect(isInsecureHost(hosts, 'mock.local:8080')).toBe(true);
    expect(isInsecureHost(hosts, 'mock.local:8081')).toBe(false);
    expect(isInsecureHost(hosts, 'mock.local')).toBe(false);
    expect(isInsecureHost(hosts, '127.0.0.10:80')).toBe(false);
    expect(isInsecureHost(hosts, 'x127.0.0.1:80')).toBe(false);
    expect(isInsecureHost(new Set(), '127.0.0.1:80')).toBe(false);
    // Only the trailing port goes: an IPv6 literal's own colons and digits stay.
    expect(isInsecureHost(new Set(['[::1]']), '[::1]:9000')).toBe(true);
  });
});

describe('address literals and the blocked-address error', () => {
  it('unwraps a bracketed IPv6 literal only', () => {
    expect(literalAddress('[::1]')).toBe('::1');
    expect(literalAddress('::1')).toBe('::1');
    expect(literalAddress('a::1]')).toBeNull();
    expect(literalAddress('[::1')).toBeNull();
  });

  it('names itself, since the callbacks keep an error’s name as their last error', () => {
    const error = new BlockedAddressError('internal.example', '10.0.0.1', 'private');
    expect(error.name).toBe('BlockedAddressError');
    expect(error.code).toBe('EVF_BLOCKED_ADDRESS');
    expect(error.message).toBe('internal.example resolves to 10.0.0.1 (private), which may not be forwarded to');
  });
});
