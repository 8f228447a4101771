import { execFileSync } from "node:child_process";
import Dockerode from "dockerode";
import { describe, expect, it } from "vitest";
import { engineInfo } from "./engine-info.ts";

/** What the docker CLI reports, as JSON: the engine's own answer, read by another client. */
function dockerCli(command: "version" | "info"): Record<string, unknown> {
  const template = command === "version" ? "{{json .Server}}" : "{{json .}}";
  return JSON.parse(execFileSync("docker", [command, "--format", template], { encoding: "utf8" }));
}

describe("engineInfo", () => {
  it("reports what the docker CLI reports about the same engine", async () => {
    const info = await engineInfo(new Dockerode());
    const version = dockerCli("version");
    const settings = dockerCli("info") as {
      Runtimes: Record<string, unknown>;
      DefaultRuntime: string;
      CgroupVersion: string;
      MemoryLimit: boolean;
      PidsLimit: boolean;
      SecurityOptions: string[];
    };
    expect(info.version).toBe(version.Version);
    expect(info.apiVersion).toBe(version.ApiVersion);
    expect(info.kernelVersion).toBe(version.KernelVersion);
    expect(info.runtimes).toEqual(Object.keys(settings.Runtimes).sort());
    expect(info.runtimes).toContain("runc");
    expect(info.defaultRuntime).toBe(settings.DefaultRuntime);
    expect(info.cgroupVersion).toBe(settings.CgroupVersion);
    expect(info.memoryLimit).toBe(settings.MemoryLimit);
    expect(info.pidsLimit).toBe(settings.PidsLimit);
    expect(info.securityOptions).toEqual(
      settings.SecurityOptions.map((option) => option.split(",")[0]!.slice(5)),
    );
    expect(info.podmanVersion).toBeUndefined();
  });
});
