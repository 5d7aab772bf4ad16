import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../../lib/oauth/public-address.js';

describe('isPublicAddress', () => {
  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e'])('takes %s as public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each([
    ['loopback', '127.0.0.1'],
    ['loopback elsewhere in 127/8', '127.5.6.7'],
    ['this host', '0.0.0.0'],
    ['private 10/8', '10.1.2.3'],
    ['private 172.16/12', '172.31.255.255'],
    ['private 192.168/16', '192.168.1.1'],
    ['CGNAT', '100.64.0.1'],
    ['link-local', '169.254.10.10'],
    ['the instance metadata address', '169.254.169.254'],
    ['multicast', '239.1.1.1'],
    ['broadcast', '255.255.255.255'],
    ['IPv6 loopback', '::1'],
    ['IPv6 unspecified', '::'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
    ['IPv4-mapped metadata', '::ffff:169.254.169.254'],
    ['NAT64 of a private address', '64:ff9b::a00:1'],
    ['6to4', '2002:a00:1::1'],
    ['unique local', 'fd12:3456::1'],
    ["AWS's IPv6 metadata address", 'fd00:ec2::254'],
    ['IPv6 link-local', 'fe80::1'],
    ['IPv6 documentation', '2001:db8::1'],
    ['IPv6 multicast', 'ff02::1'],
    ['no address at all', 'example.com'],
  ])('refuses %s (%s)', (_what, address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});
