import { networkInterfaces } from 'node:os';

/**
 * Whether an engine container's address is on its network's bridge, as an interface of this
 * machine (`bridge`, the name the network was made with) whose subnet holds the address, so that
 * connecting to it reaches the container itself: true for a rootful engine on Linux. False where
 * the engine's networks live elsewhere (Docker Desktop's VM, rootless Podman's namespace), even
 * when a LAN or VPN interface of this machine happens to hold the same subnet: the address is
 * then another host's, and the proxy must not send anyone's requests there.
 */
export function onItsBridge(address: string, bridge: string, interfaces = networkInterfaces()): boolean {
  const target = ipv4ToNumber(address);
  if (target === undefined) return false;
  return (interfaces[bridge] ?? []).some((entry) => {
    if (entry.family !== 'IPv4' || entry.internal) return false;
    const own = ipv4ToNumber(entry.address);
    const mask = ipv4ToNumber(entry.netmask);
    return own !== undefined && mask !== undefined && mask !== 0 && own !== target && (own & mask) >>> 0 === (target & mask) >>> 0;
  });
}

function ipv4ToNumber(address: string): number | undefined {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((part) => !Number.isInteger(part) || part < 0 || part > 255)) return undefined;
  return parts.reduce((value, part) => value * 256 + part, 0);
}
