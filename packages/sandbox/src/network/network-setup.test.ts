import type Dockerode from "dockerode";
import { describe, expect, it } from "vitest";
import { SandboxConfigError } from "../errors/sandbox-config-error.ts";
import { applySessionNetwork, SessionNetworking } from "./network-setup.ts";
import type { SessionNetwork } from "./session-network.ts";
import { subnetAt } from "./subnet-pool.ts";

const network: SessionNetwork = {
  ...subnetAt(5),
  networkName: "codeaction-net-test",
  networkId: "abc",
  sessionId: "session-1",
  environment: { HTTP_PROXY: "http://198.18.0.82:3128", NO_PROXY: "localhost" },
};

describe("applySessionNetwork", () => {
  it("moves the container onto the session network at its address, with the proxy variables", () => {
    const spec: Dockerode.ContainerCreateOptions = {
      Env: ["HOME=/workspace", "HTTP_PROXY=http://elsewhere:1"],
      NetworkDisabled: true,
      HostConfig: { NetworkMode: "none", ReadonlyRootfs: true },
    };
    applySessionNetwork(spec, network);
    expect(spec.NetworkDisabled).toBe(false);
    expect(spec.HostConfig).toEqual({
      NetworkMode: "codeaction-net-test",
      ReadonlyRootfs: true,
      DnsOptions: ["timeout:1", "attempts:1"],
    });
    expect(spec.NetworkingConfig).toEqual({
      EndpointsConfig: { "codeaction-net-test": { IPAMConfig: { IPv4Address: "198.18.0.83" } } },
    });
    expect(spec.Env).toEqual(["HOME=/workspace", "HTTP_PROXY=http://198.18.0.82:3128", "NO_PROXY=localhost"]);
  });

  it("leaves the spec alone without a network", () => {
    const spec: Dockerode.ContainerCreateOptions = { HostConfig: { NetworkMode: "none" } };
    expect(applySessionNetwork(spec, undefined)).toEqual({ HostConfig: { NetworkMode: "none" } });
  });
});

describe("SessionNetworking", () => {
  it("needs no proxy for none and full, and validates an allow-list when constructed", async () => {
    const none = new SessionNetworking("none", { managerId: "m" });
    expect(none.policy).toBeUndefined();
    expect(await none.attach({} as Dockerode, { sessionId: "s" })).toBeUndefined();
    expect(new SessionNetworking("restricted", { managerId: "m" }).policy?.names).toEqual([
      "files.pythonhosted.org",
      "pypi.org",
    ]);
    expect(() => new SessionNetworking({ allow: ["https://pypi.org/simple"] }, { managerId: "m" })).toThrow(
      SandboxConfigError,
    );
  });
});
