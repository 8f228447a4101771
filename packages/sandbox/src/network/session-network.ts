import type Dockerode from "dockerode";
import type { SessionSubnet } from "./subnet-pool.ts";

/** A session's own internal network, joined by the proxy and by that session's sandbox only. */
export type SessionNetwork = SessionSubnet & {
  networkName: string;
  networkId: string;
  sessionId: string;
  /** HTTP_PROXY, HTTPS_PROXY, NO_PROXY and their lower-case spellings. */
  environment: Record<string, string>;
};

/** What a sandbox container needs to sit on its session network (merge into its create options). */
export function sessionNetworkSettings(network: SessionNetwork): {
  networkMode: string;
  networkingConfig: Dockerode.ContainerCreateOptions["NetworkingConfig"];
  /** Docker's resolver answers nothing on an internal network: fail a name lookup in 1 s, not 10. */
  dnsOptions: string[];
  environment: Record<string, string>;
} {
  return {
    networkMode: network.networkName,
    dnsOptions: ["timeout:1", "attempts:1"],
    networkingConfig: {
      EndpointsConfig: { [network.networkName]: { IPAMConfig: { IPv4Address: network.sandboxAddress } } },
    },
    environment: network.environment,
  };
}

/**
 * What is wrong with a sandbox container's networking, read back from `docker inspect`: it must be
 * attached to its session network only, at its address. Empty when all is well.
 */
export function findSessionNetworkProblems(
  info: Dockerode.ContainerInspectInfo,
  network: SessionNetwork,
): string[] {
  const problems: string[] = [];
  const mode = info.HostConfig.NetworkMode;
  if (mode !== network.networkName && mode !== network.networkId) {
    problems.push(`NetworkMode is ${mode}, not the session network ${network.networkName}`);
  }
  const attached = Object.keys(info.NetworkSettings?.Networks ?? {});
  if (attached.length !== 1 || attached[0] !== network.networkName) {
    problems.push(
      `the container is attached to ${attached.join(", ") || "no network"}, not only to ${network.networkName}`,
    );
  }
  const endpoint = info.NetworkSettings?.Networks?.[network.networkName];
  const address = endpoint?.IPAddress || endpoint?.IPAMConfig?.IPv4Address;
  if (info.State?.Running && address !== network.sandboxAddress) {
    problems.push(`the container's address is ${address}, not ${network.sandboxAddress}`);
  }
  return problems;
}
