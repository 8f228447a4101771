import Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FixtureServer, startFixtureServer } from "../../test/egress-fixture.ts";
import { labelKeys } from "../container/labels.ts";
import { SandboxManager } from "../manager.ts";
import type { SandboxSession } from "../session.ts";

// The allow-list through SandboxManager, end to end. Only the project's own containers are contacted:
// the fixture server (through pinned names) and the proxy; .invalid names stand for "outside".

const docker = new Dockerode();

describe("a session with network: { allow, hosts }", () => {
  let server: FixtureServer;
  let manager: SandboxManager;
  let session: SandboxSession;

  beforeAll(async () => {
    server = await startFixtureServer(docker, { name: `codeaction-restricted-test-${process.pid}` });
    manager = new SandboxManager({
      network: { allow: ["pypi.test.invalid"], hosts: { "pypi.test.invalid": server.address } },
      env: { PIP_INDEX_URL: "http://pypi.test.invalid/simple", PIP_TRUSTED_HOST: "pypi.test.invalid" },
    });
    session = await manager.createSession({ deadlineSeconds: 600 });
  });

  afterAll(async () => {
    await manager?.cleanupAll();
    await server?.remove();
    if (manager) {
      const filters = { label: [`${labelKeys.managerId}=${manager.managerId}`] };
      expect(await docker.listContainers({ all: true, filters })).toEqual([]);
      expect(await docker.listNetworks({ filters })).toEqual([]);
    }
  });

  it("puts the sandbox on its own internal network, with the proxy variables, read back from inspect", async () => {
    const info = await session.inspect();
    const networkName = info.HostConfig.NetworkMode ?? "";
    expect(networkName).toMatch(/^codeaction-net-/);
    expect(Object.keys(info.NetworkSettings.Networks)).toEqual([networkName]);
    const network = (await docker.getNetwork(networkName).inspect()) as { Internal: boolean };
    expect(network.Internal).toBe(true);
    expect(info.Config.Env).toEqual(
      expect.arrayContaining([expect.stringMatching(/^HTTPS_PROXY=http:\/\/198\.1[89]\./)]),
    );
  });

  it("reaches the allowed name through the proxy and is refused anything else", async () => {
    const source = (url: string) =>
      `import urllib.request, urllib.error\ntry:\n  print(urllib.request.urlopen("${url}", timeout=20).read().decode().strip())\nexcept urllib.error.HTTPError as error:\n  print("HTTP", error.code)`;
    expect(
      (await session.execute(`python3 -c '${source("http://pypi.test.invalid/hello.txt")}'`)).stdout.trim(),
    ).toBe("hello from the fixture");
    expect((await session.execute(`python3 -c '${source("http://example.invalid/")}'`)).stdout.trim()).toBe(
      "HTTP 403",
    );
  });

  it("installs a package with installPackage through the proxy", async ({ skip }) => {
    const pip = await session.execute("python3 -m pip --version");
    // The sandbox image must ship pip for installPackage; egress-proxy.docker.test.ts proves pip through
    // the proxy with pip's own wheel either way.
    if (pip.exitCode !== 0)
      skip("the sandbox image has no pip (python3 -m pip); installPackage cannot work with it");
    const result = await session.installPackage("codeaction-probe");
    expect(result.stdout + result.stderr).toMatch(/Successfully installed codeaction-probe-1\.0/);
    expect(
      (
        await session.execute(`python3 -c "import codeaction_probe; print(codeaction_probe.ANSWER)"`)
      ).stdout.trim(),
    ).toBe("42");
  });
});

describe("a session whose allow-list is invalid", () => {
  it("is refused before any container exists, naming the entry", () => {
    expect(() => new SandboxManager({ network: { allow: ["https://pypi.org/simple"] } })).toThrow(
      /"https:\/\/pypi\.org\/simple" is a URL; list the host name only/,
    );
  });
});
