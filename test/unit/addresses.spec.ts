import type { LookupAddress, LookupOptions } from 'node:dns';
import {
  BlockedAddressError,
  blockedAddressReason,
  guardedLookup,
  guardedLookupWith,
  literalAddress,
  ResolveAll,
  literalBlockReason,
} from '../../src/targets/addresses';

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
  ])('%s is allowed', (address) => {
    expect(blockedAddressReason(address)).toBeNull();
  });

  it('refuses what is not an address at all', () => {
    for (const input of ['', 'example.com', '127.0.0.1.5', '::ffff:999.0.0.1', '1::2::3'])
      expect(blockedAddressReason(input)).toBe('not an IP address');
  });

  it('names every refused range as people write it', () => {
    expect(blockedAddressReason('192.0.2.1')).toBe('reserved');
    expect(blockedAddressReason('255.255.255.255')).toBe('broadcast');
    expect(blockedAddressReason('2001:db8::1')).toBe('reserved');
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
