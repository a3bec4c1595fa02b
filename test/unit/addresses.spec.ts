import { blockedAddressReason, literalAddress } from '../../src/forwarding/addresses';

describe('SSRF address classification', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.0.0.2', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['224.0.0.1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fd00::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:10.0.0.1', 'private'],
  ])('%s is refused (%s)', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111'])('%s is allowed', (address) => {
    expect(blockedAddressReason(address)).toBeNull();
  });

  it('every spelling of an address reaches the same check through the URL parser', () => {
    for (const spelling of ['2130706434', '0x7f000002', '0177.0.0.2', '127.2', '[::ffff:127.0.0.2]', '[::ffff:7f00:2]']) {
      const host = new URL(`https://${spelling}/`).hostname;
      const literal = literalAddress(host);
      expect(literal).not.toBeNull();
      expect(blockedAddressReason(literal!)).toBe('loopback');
    }
    expect(literalAddress('example.com')).toBeNull();
  });
});
