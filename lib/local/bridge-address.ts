import { networkInterfaces } from 'node:os';

/**
 * Whether an engine container's address is on a bridge of this machine (an interface whose
 * subnet holds it), so that connecting to it reaches the container itself: true for a rootful
 * engine on Linux, false where the engine's networks live elsewhere (Docker Desktop's VM,
 * rootless Podman's namespace), where the same address could even be another host's.
 */
export function onThisMachinesBridge(address: string, interfaces = networkInterfaces()): boolean {
  const target = ipv4ToNumber(address);
  if (target === undefined) return false;
  return Object.values(interfaces).some((entries) =>
    (entries ?? []).some((entry) => {
      if (entry.family !== 'IPv4' || entry.internal) return false;
      const own = ipv4ToNumber(entry.address);
      const mask = ipv4ToNumber(entry.netmask);
      return own !== undefined && mask !== undefined && mask !== 0 && own !== target && (own & mask) >>> 0 === (target & mask) >>> 0;
    }),
  );
}

function ipv4ToNumber(address: string): number | undefined {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((part) => !Number.isInteger(part) || part < 0 || part > 255)) return undefined;
  return parts.reduce((value, part) => value * 256 + part, 0);
}
