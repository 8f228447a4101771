import { randomUUID } from "node:crypto";
import { buildLabels } from "../container/labels.ts";
import type {
  ContainerCreateOptions,
  ContainerEngine,
  ContainerInspectInfo,
  NetworkCreateOptions,
} from "../engine/container-engine.ts";
import { describeDockerError, removeNetwork } from "../engine/engine-operations.ts";
import { NetworkSetupError } from "../errors/network-setup-error.ts";
import { proxyPort } from "./proxy-image.ts";
import { randomSubnet, type SessionSubnet } from "./subnet-pool.ts";

/** Label that tells the proxy container and the session networks apart from sandboxes. */
export const roleLabel = "codeaction.role";

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
  networkingConfig: ContainerCreateOptions["NetworkingConfig"];
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
export function findSessionNetworkProblems(info: ContainerInspectInfo, network: SessionNetwork): string[] {
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

/** Where a session network is made: for which session and manager, until when, and which proxy joins it. */
export type SessionNetworkRequest = {
  sessionId: string;
  managerId: string;
  deadline: Date;
  proxyContainerId: string;
};

/**
 * Creates a session's internal network (no route out, no host address on the bridge), reads its
 * settings back and joins the proxy at its address. A subnet that overlaps one in use is tried again
 * with another (8 tries). Throws NetworkSetupError (step "session-network").
 */
export async function createSessionNetwork(
  docker: ContainerEngine,
  request: SessionNetworkRequest,
): Promise<SessionNetwork> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const subnet = randomSubnet();
    const networkName = `codeaction-net-${request.sessionId.slice(0, 12)}-${randomUUID().slice(0, 6)}`;
    let networkId: string;
    try {
      networkId = (await docker.createNetwork(internalNetworkSpec(networkName, subnet, request))).id;
    } catch (error) {
      lastError = error;
      if (/overlap/i.test(describeDockerError(error))) continue;
      break;
    }
    await joinProxy(docker, { networkId, networkName, subnet, proxyContainerId: request.proxyContainerId });
    return describeSessionNetwork({ subnet, networkName, networkId, sessionId: request.sessionId });
  }
  throw new NetworkSetupError({
    step: "session-network",
    reason: `the session's internal network could not be created: ${describeDockerError(lastError)}`,
    fix: "Check `docker network ls` for leftovers (`codeaction-net-*`) and the engine's log.",
    cause: lastError,
  });
}

function internalNetworkSpec(
  networkName: string,
  subnet: SessionSubnet,
  request: SessionNetworkRequest,
): NetworkCreateOptions {
  return {
    Name: networkName,
    Driver: "bridge",
    Internal: true,
    CheckDuplicate: true,
    EnableIPv6: false,
    Attachable: false,
    IPAM: { Driver: "default", Config: [{ Subnet: subnet.subnet, Gateway: subnet.gateway }] },
    Options: {
      // No address on the host side of the bridge: the sandbox cannot reach the host's services.
      "com.docker.network.bridge.inhibit_ipv4": "true",
      "com.docker.network.bridge.enable_ip_masquerade": "false",
    },
    Labels: buildLabels({
      managerId: request.managerId,
      deadline: request.deadline,
      extra: { [roleLabel]: "session-network" },
    }),
  };
}

/** Reads the network's settings back, then connects the proxy at its address; removes the network on failure. */
async function joinProxy(
  docker: ContainerEngine,
  join: { networkId: string; networkName: string; subnet: SessionSubnet; proxyContainerId: string },
): Promise<void> {
  try {
    const info = (await docker.getNetwork(join.networkId).inspect()) as {
      Internal?: boolean;
      Options?: Record<string, string>;
    };
    if (info.Internal !== true || info.Options?.["com.docker.network.bridge.inhibit_ipv4"] !== "true") {
      throw new Error(`the engine created ${join.networkName} without Internal or inhibit_ipv4`);
    }
    await docker.getNetwork(join.networkId).connect({
      Container: join.proxyContainerId,
      EndpointConfig: { IPAMConfig: { IPv4Address: join.subnet.proxyAddress } },
    });
  } catch (error) {
    await removeNetwork(docker, join.networkId).catch(() => undefined);
    throw new NetworkSetupError({
      step: "session-network",
      reason: `the proxy could not join the session network ${join.networkName}: ${describeDockerError(error)}`,
      fix: "The proxy container may have stopped; create a new sandbox manager.",
      cause: error,
    });
  }
}

/** The session network as the sandbox sees it: its addresses and the proxy environment. */
function describeSessionNetwork(parts: {
  subnet: SessionSubnet;
  networkName: string;
  networkId: string;
  sessionId: string;
}): SessionNetwork {
  const proxyUrl = `http://${parts.subnet.proxyAddress}:${proxyPort}`;
  const noProxy = "localhost,127.0.0.1,::1";
  return {
    ...parts.subnet,
    networkName: parts.networkName,
    networkId: parts.networkId,
    sessionId: parts.sessionId,
    environment: {
      HTTP_PROXY: proxyUrl,
      HTTPS_PROXY: proxyUrl,
      NO_PROXY: noProxy,
      http_proxy: proxyUrl,
      https_proxy: proxyUrl,
      no_proxy: noProxy,
    },
  };
}
