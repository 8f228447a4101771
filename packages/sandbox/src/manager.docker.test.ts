import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ImageMissingError } from "./errors/image-missing-error.ts";
import { RuntimeNotRegisteredError } from "./errors/runtime-not-registered-error.ts";
import { SecurityFlagError } from "./errors/security-flag-error.ts";
import { SandboxManager } from "./manager.ts";

describe("SandboxManager fails closed", () => {
  it("refuses a runtime the engine does not have, listing the registered ones", async () => {
    const manager = new SandboxManager({ backend: "gvisor", runtime: "runsc-not-installed" });
    const error = await manager.ready().catch((caught: unknown) => caught);
    expect(RuntimeNotRegisteredError.isInstance(error)).toBe(true);
    expect((error as RuntimeNotRegisteredError).registeredRuntimes).toEqual(
      expect.arrayContaining(["runc", "runsc"]),
    );
    expect((error as Error).message).toMatch(/"runsc-not-installed".*Registered runtimes: .*runc/);
  });

  it("refuses backend gvisor with a runtime that is not gVisor, before any container exists", async () => {
    const manager = new SandboxManager({ backend: "gvisor", runtime: "runc" });
    const error = await manager.ready().catch((caught: unknown) => caught);
    expect((error as { code?: string }).code).toBe("runtime-not-gvisor");
    expect((error as Error).message).toBe(
      'backend: "gvisor" needs a gVisor runtime, but the runtime "runc" runs "runc", not runsc: the sandbox would run without gVisor. Remove the runtime option to use "runsc", or name the runtime your gVisor is registered as.',
    );
    const gvisor = new SandboxManager({ backend: "gvisor", runtime: "runsc" });
    await expect(gvisor.ready()).resolves.toBeUndefined();
    await gvisor.cleanupAll();
  });

  it("names a missing image and the command that builds it", async () => {
    const manager = new SandboxManager({ image: "codeaction/does-not-exist:0" });
    const error = await manager.createSession().catch((caught: unknown) => caught);
    expect(ImageMissingError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('"codeaction/does-not-exist:0"');
    expect((error as Error).message).toContain("codeaction image build");
  });

  it("refuses an image that declares a VOLUME", async () => {
    const image = `codeaction-test/volume:${process.pid}`;
    execFileSync("docker", ["build", "-q", "-t", image, "-"], {
      input: "FROM codeaction/python:3.11\nVOLUME /data\n",
      stdio: ["pipe", "ignore", "inherit"],
    });
    try {
      const error = await new SandboxManager({ image }).ready().catch((caught: unknown) => caught);
      expect(SecurityFlagError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain("VOLUME /data");
    } finally {
      execFileSync("docker", ["rmi", "-f", image], { stdio: "ignore" });
    }
  });

  it("refuses an invalid allow-list before any container exists (the allow-list itself: network/*.docker.test.ts)", () => {
    expect(() => new SandboxManager({ network: { allow: ["example.invalid:443"] } })).toThrow(/has a port/);
  });

  it("removes every container of the manager on cleanupAll and on `await using`", async () => {
    let ids: string[] = [];
    {
      await using manager = new SandboxManager();
      const first = await manager.createSession({ deadlineSeconds: 120 });
      const second = await manager.createSession({ deadlineSeconds: 120 });
      ids = [first.containerId, second.containerId];
      await second.destroy();
      await second.destroy();
    }
    for (const id of ids) {
      expect(
        execFileSync("docker", ["ps", "-aq", "--no-trunc", "--filter", `id=${id}`])
          .toString()
          .trim(),
      ).toBe("");
    }
  });

  it("a request waiting for a slot leaves the line when its signal aborts, and no container is started for it", async () => {
    await using manager = new SandboxManager({ pool: 0, maxConcurrent: 1 });
    const holder = await manager.createSession();
    const controller = new AbortController();
    const waiting = manager.createSession({ signal: controller.signal });
    await expect.poll(() => manager.poolStatus().waiting).toBe(1);
    controller.abort(new Error("the client went away"));
    await expect(waiting).rejects.toThrow("the client went away");
    expect(manager.poolStatus()).toMatchObject({ waiting: 0, live: 1 });
    await holder.destroy();
    // The freed slot went to nobody: no container was started for the aborted request.
    expect(manager.poolStatus()).toMatchObject({ waiting: 0, live: 0, starting: 0 });
    await expect(manager.createSession({ signal: AbortSignal.abort(new Error("already")) })).rejects.toThrow(
      "already",
    );
  });
});
