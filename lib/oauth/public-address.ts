import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * Addresses a fetch on a client's behalf must never reach (docs/oauth.md, "Client metadata
 * documents"): the special-purpose blocks of RFC 6890 (IANA's IPv4 and IPv6 special-purpose
 * address registries): this host, private networks (RFC 1918), shared CGNAT space (RFC 6598),
 * loopback, link-local (with the cloud metadata address 169.254.169.254 and AWS's fd00:ec2::254),
 * documentation, benchmarking, multicast and reserved space, and the IPv6 forms that carry an IPv4
 * address (mapped, NAT64, 6to4, Teredo), which are refused outright rather than unwrapped.
 */
// Two lists: a BlockList matches an IPv4 address against IPv4-mapped IPv6 subnets as well.
const NOT_PUBLIC_V4 = /* @__PURE__ */ (() => {
  const list = new BlockList();
  for (const [network, prefix] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.88.99.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ] as const) {
    list.addSubnet(network, prefix, 'ipv4');
  }
  return list;
})();
const NOT_PUBLIC_V6 = /* @__PURE__ */ (() => {
  const list = new BlockList();
  for (const [network, prefix] of [
    ['::', 128],
    ['::1', 128],
    ['::ffff:0:0', 96],
    ['64:ff9b::', 96],
    ['64:ff9b:1::', 48],
    ['100::', 64],
    ['2001::', 32],
    ['2001:db8::', 32],
    ['2002::', 16],
    ['fc00::', 7],
    ['fe80::', 10],
    ['fec0::', 10],
    ['ff00::', 8],
  ] as const) {
    list.addSubnet(network, prefix, 'ipv6');
  }
  return list;
})();

/** True for an address on the public internet; false for everything above and for anything that is no IP address. */
export function isPublicAddress(address: string): boolean {
  if (isIPv4(address)) return !NOT_PUBLIC_V4.check(address, 'ipv4');
  if (isIPv6(address)) {
    // Only global unicast (2000::/3) is routed on the internet; the rest of IPv6 is special or unassigned.
    const firstGroup = Number.parseInt(address.split(':')[0] || '0', 16);
    if (firstGroup < 0x2000 || firstGroup > 0x3fff) return false;
    return !NOT_PUBLIC_V6.check(address, 'ipv6');
  }
  return false;
}
