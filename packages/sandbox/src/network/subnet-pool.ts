import { randomInt } from "node:crypto";

/**
 * Each session gets its own internal network: a /28 taken at random from 198.18.0.0/15 (reserved for
 * benchmarking, RFC 2544, so it collides with no LAN and no cloud network a pinned name may point
 * to, and the proxy denies it as a destination). The bridge gets no host address, so .1 is a gateway
 * in name only; the proxy is .2 and the sandbox .3.
 */
export const subnetPool = { base: "198.18.0.0", prefixLength: 15, blockPrefixLength: 28 } as const;

export type SessionSubnet = { subnet: string; gateway: string; proxyAddress: string; sandboxAddress: string };

function toNumber(address: string): number {
  return address.split(".").reduce((total, part) => total * 256 + Number(part), 0);
}

function toAddress(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join(".");
}

/** The pool as CIDR ("198.18.0.0/15"): the only clients squid serves. */
export function subnetPoolCidr(): string {
  return `${subnetPool.base}/${subnetPool.prefixLength}`;
}

/** The /28 with the given index in the pool (0 .. blockCount - 1). */
export function subnetAt(index: number): SessionSubnet {
  const blockSize = 2 ** (32 - subnetPool.blockPrefixLength);
  const blockCount = 2 ** (subnetPool.blockPrefixLength - subnetPool.prefixLength);
  if (!Number.isInteger(index) || index < 0 || index >= blockCount) {
    throw new RangeError(`subnet index must be an integer from 0 to ${blockCount - 1}, got ${index}`);
  }
  const start = toNumber(subnetPool.base) + index * blockSize;
  return {
    subnet: `${toAddress(start)}/${subnetPool.blockPrefixLength}`,
    gateway: toAddress(start + 1),
    proxyAddress: toAddress(start + 2),
    sandboxAddress: toAddress(start + 3),
  };
}

/** A random /28 of the pool (the engine refuses one that overlaps a network it has; then try another). */
export function randomSubnet(): SessionSubnet {
  return subnetAt(randomInt(2 ** (subnetPool.blockPrefixLength - subnetPool.prefixLength)));
}
