import type { LookupAddress, LookupOptions } from 'node:dns';
import {
  addressKind,
  BlockedAddressError,
  blockedAddressReason,
  guardedLookup,
  guardedLookupWith,
  literalAddress,
  ResolveAll,
  literalBlockReason,
} from '../../src/modules/forwarding-setup/targets/addresses';

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

  // Transition forms that embed an IPv4 address, whose gateway would reach it: refused whatever the
  // embedded address, public or not (a mutant that judges them "unicast" lived before these cases).
  it.each([
    ['2002:7f00:1::', '6to4'], // 6to4 of 127.0.0.1
    ['2002:a9fe:a9fe::1', '6to4'], // 6to4 of 169.254.169.254
    ['2002:808:808::', '6to4'], // 6to4 of a public address: refused as well
    ['64:ff9b::7f00:1', 'NAT64'], // NAT64 of 127.0.0.1
    ['64:ff9b::a00:1', 'NAT64'], // NAT64 of 10.0.0.1
    ['64:ff9b::808:808', 'NAT64'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001::7f00:1', 'Teredo'],
    ['::ffff:0:7f00:1', 'IPv4-translated'],
  ])('%s is refused (%s)', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '::FFFF:8.8.8.8',
    '0:0:0:0:0:ffff:8.8.8.8',
  ])('%s is allowed', (address) => {
    expect(blockedAddressReason(address)).toBeNull();
  });

  it('refuses what is not an address at all', () => {
    for (const input of ['', 'example.com', '127.0.0.1.5', '::ffff:999.0.0.1', '1::2::3', '::010.0.0.1', '::1.2.3'])
      expect(blockedAddressReason(input)).toBe('not an IP address');
  });

  it('names every refused range as people write it', () => {
    expect(blockedAddressReason('192.0.2.1')).toBe('reserved');
    expect(blockedAddressReason('255.255.255.255')).toBe('broadcast');
    expect(blockedAddressReason('2001:db8::1')).toBe('documentation');
  });

  it.each([
    ['loopback', 'a loopback address'],
    ['unspecified', 'an unspecified address'],
    ['unique-local', 'a unique-local address'],
    ['IPv4-compatible', 'an IPv4-compatible address'],
    ['IETF protocol assignment', 'an IETF protocol assignment address'],
    ['ORCHIDv2', 'an ORCHIDv2 address'],
    ['NAT64', 'a NAT64 address'],
  ])('writes the reason %s as "%s"', (reason, written) => {
    expect(addressKind(reason)).toBe(written);
  });

  it('every spelling of an address reaches the same check through the URL parser', () => {
    for (const spelling of [
      '2130706434',
      '0x7f000002',
      '0177.0.0.2',
      '127.2',
      '[::ffff:127.0.0.2]',
      '[::ffff:7f00:2]',
    ]) {
      const host = new URL(`https://${spelling}/`).hostname;
      const literal = literalAddress(host);
      expect(literal).not.toBeNull();
      expect(blockedAddressReason(literal!)).toBe('loopback');
    }
    expect(literalAddress('example.com')).toBeNull();
  });

  it('literals: brackets are stripped only as a pair', () => {
    expect(literalAddress('[::1]')).toBe('::1');
    expect(literalAddress('::1')).toBe('::1');
    expect(literalAddress('[::1')).toBeNull();
    expect(literalAddress('::1]')).toBeNull();
    expect(literalAddress('10.0.0.1')).toBe('10.0.0.1');
    expect(literalBlockReason('[64:ff9b::7f00:1]')).toBe('NAT64');
    expect(literalBlockReason('[2606:4700:4700::1111]')).toBeNull();
    expect(literalBlockReason('api.example')).toBeNull();
  });
});

// IPv6 is an allow-list: global unicast 2000::/3 only, minus the special-purpose ranges inside it.
// Each range is probed at its edges, and the addresses just outside them are probed too.
describe('IPv6: global unicast only', () => {
  it.each([
    // The security review's literals: IPv4-compatible forms of 169.254.169.254, 127.0.0.1, 10.0.0.1.
    ['::a9fe:a9fe', 'IPv4-compatible'],
    ['::169.254.169.254', 'IPv4-compatible'],
    // ipaddr.js alone reads ::a.b.c.d as ::ffff:a.b.c.d, which would pass this one as the public 8.8.8.8.
    ['::8.8.8.8', 'IPv4-compatible'],
    ['0::8.8.8.8', 'IPv4-compatible'],
    ['64:ff9b::10.0.0.1', 'NAT64'],
    ['::7f00:1', 'IPv4-compatible'],
    ['::a00:1', 'IPv4-compatible'],
    ['::808:808', 'IPv4-compatible'], // a public IPv4 address inside: refused as well
    ['::2', 'IPv4-compatible'],
    ['::ffff:ffff', 'IPv4-compatible'],
    ['::1:0:0', 'reserved'], // just past ::/96
    ['4000::1', 'reserved'],
    ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'reserved'], // just below 2000::/3
    ['4000::', 'reserved'], // just above it
    ['5f00::1', 'reserved'], // SRv6 SIDs
    ['e000::1', 'reserved'],
    ['100::', 'discard-only'],
    ['100::ffff:ffff:ffff:ffff', 'discard-only'],
    ['100:0:0:1::', 'reserved'],
    ['fe80::', 'link-local'],
    ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'link-local'],
    ['fec0::1', 'site-local'],
    ['feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'site-local'],
    ['fc00::', 'unique-local'],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique-local'],
    ['ff00::', 'multicast'],
    ['::ffff:0:0:0', 'IPv4-translated'],
    ['::ffff:0:a9fe:a9fe', 'IPv4-translated'],
    ['64:ff9b::', 'NAT64'],
    ['64:ff9b::ffff:ffff', 'NAT64'],
    ['64:ff9b::1:0:0', 'reserved'],
    ['64:ff9b:1::a9fe:a9fe', 'NAT64'],
    ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'NAT64'],
    ['64:ff9b:2::', 'reserved'],
    // Inside 2000::/3.
    ['2001::', 'Teredo'],
    ['2001:0:ffff:ffff:ffff:ffff:ffff:ffff', 'Teredo'],
    ['2001:1::', 'IETF protocol assignment'],
    ['2001:1::4', 'IETF protocol assignment'],
    ['2001:2::', 'benchmarking'],
    ['2001:2:0:ffff:ffff:ffff:ffff:ffff', 'benchmarking'],
    ['2001:2:1::', 'IETF protocol assignment'],
    ['2001:4:111:ffff:ffff:ffff:ffff:ffff', 'IETF protocol assignment'],
    ['2001:4:113::', 'IETF protocol assignment'],
    ['2001:10::', 'ORCHID'],
    ['2001:1f:ffff:ffff:ffff:ffff:ffff:ffff', 'ORCHID'],
    ['2001:20::', 'ORCHIDv2'],
    ['2001:2f:ffff:ffff:ffff:ffff:ffff:ffff', 'ORCHIDv2'],
    ['2001:30::1', 'IETF protocol assignment'], // drone entity tags: identifiers, not locators
    ['2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', 'IETF protocol assignment'],
    ['2001:db8::', 'documentation'],
    ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
    ['2002::', '6to4'],
    ['2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '6to4'],
    ['3fff::', 'documentation'],
    ['3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
    // ISATAP interface identifiers under a global prefix embed an IPv4 address too.
    ['2606:4700::5efe:a9fe:a9fe', 'ISATAP'],
    ['2606:4700::200:5efe:7f00:1', 'ISATAP'],
  ])('%s is refused (%s)', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each([
    '2000::', // the first global unicast address
    '3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', // the last
    '2001:200::1', // just past the IETF protocol assignments
    '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', // either side of 2001:db8::/32
    '2001:db9::',
    '2001:1::1', // PCP anycast
    '2001:1::2', // TURN anycast
    '2001:1::3', // DNS-SD service registration anycast
    '2001:3::1', // AMT
    '2001:3:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:4:112::',
    '2001:4:112:ffff:ffff:ffff:ffff:ffff', // AS112-v6
    '2003::1', // just past 6to4
    '2001:ffff::1',
    '3ffe:ffff::1',
    '3fff:1000::', // just past 3fff::/20
    '2606:4700::6810:84e5',
    '2606:4700::100:5efe:a9fe:a9fe', // not an ISATAP identifier: 0100 is neither 0000 nor 0200
  ])('%s is allowed', (address) => {
    expect(blockedAddressReason(address)).toBeNull();
  });

  it('the IP literals of target URLs and config hosts get the same verdict', () => {
    for (const host of ['[::a9fe:a9fe]', '[::7f00:1]', '[::a00:1]', '[::2]', '[4000::1]']) {
      expect(literalBlockReason(new URL(`https://${host}/`).hostname)).not.toBeNull();
    }
    expect(literalBlockReason(new URL('https://[::169.254.169.254]/').hostname)).toBe('IPv4-compatible');
  });
});

describe('guardedLookup: the connect-time DNS check', () => {
  const lookup = (hostname: string, options: LookupOptions) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>(
      (resolve) => guardedLookup(hostname, options, (error, address, family) => resolve({ error, address, family })),
    );

  it('refuses a name that resolves to loopback, naming the address and why', async () => {
    const { error } = await lookup('localhost', {});
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(error).toMatchObject({ code: 'EVF_BLOCKED_ADDRESS', hostname: 'localhost', reason: 'loopback' });
    expect((error as BlockedAddressError).address).toMatch(/^(127\.0\.0\.1|::1)$/);
    expect(error!.message).toContain('localhost resolves to');
  });

  it('hands on the resolver’s own errors', async () => {
    const { error } = await lookup('no-such-host.invalid', {});
    expect(error).not.toBeNull();
    expect(error).not.toBeInstanceOf(BlockedAddressError);
  });

  // A resolver of the test's own: a name that resolves to a public and a private address must be refused
  // whichever comes first, and a socket must never be handed an unchecked address.
  describe('with every resolved address checked, not the first', () => {
    const resolvingTo =
      (addresses: LookupAddress[]): ResolveAll =>
      (_hostname, _options, callback) =>
        process.nextTick(() => callback(null, addresses));
    const guarded = (addresses: LookupAddress[], options: LookupOptions = {}) =>
      new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[] }>((resolve) =>
        guardedLookupWith(resolvingTo(addresses))('pay.example', options, (error, address) =>
          resolve({ error, address }),
        ),
      );
    const publicV4 = { address: '93.184.216.34', family: 4 };

    it.each([
      [[publicV4, { address: '10.0.0.7', family: 4 }], '10.0.0.7', 'private'],
      [[{ address: '169.254.169.254', family: 4 }, publicV4], '169.254.169.254', 'link-local'],
      [[publicV4, { address: '2606:4700::1111', family: 6 }, { address: '::1', family: 6 }], '::1', 'loopback'],
      [[publicV4, { address: '::a9fe:a9fe', family: 6 }], '::a9fe:a9fe', 'IPv4-compatible'],
      [[publicV4, { address: '::8.8.8.8', family: 6 }], '::8.8.8.8', 'IPv4-compatible'],
      [[{ address: '4000::1', family: 6 }, publicV4], '4000::1', 'reserved'],
    ])('%j is refused, naming %s', async (addresses, address, reason) => {
      for (const options of [{}, { all: true }]) {
        const answer = await guarded(addresses, options);
        expect(answer.error).toBeInstanceOf(BlockedAddressError);
        expect(answer.error).toMatchObject({ hostname: 'pay.example', address, reason });
        expect(answer.address).toEqual([]);
      }
    });

    it('passes names whose every address is public, handing on what it checked', async () => {
      const both = [publicV4, { address: '2606:4700::1111', family: 6 }];
      expect(await guarded(both)).toEqual({ error: null, address: '93.184.216.34' });
      expect(await guarded(both, { all: true })).toEqual({ error: null, address: both });
    });
  });

  it('answers in the form the socket asked for: one address, or all of them', async () => {
    const one = await lookup('8.8.8.8', {});
    expect(one).toEqual({ error: null, address: '8.8.8.8', family: 4 });
    const all = await lookup('8.8.8.8', { all: true });
    expect(all.error).toBeNull();
    expect(all.address).toEqual([{ address: '8.8.8.8', family: 4 }]);
  });
});
