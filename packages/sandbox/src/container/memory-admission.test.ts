import { describe, expect, it } from "vitest";
import { parseSandboxConfig } from "../config.ts";
import { liveContainerLimit } from "./memory-admission.ts";

const gibibyte = 1024 ** 3;

describe("maxTotalMemory: the sum of a manager's container memory limits", () => {
  it("admits as many live containers as fit in it, never more than maxConcurrent", () => {
    const limit = (input: Record<string, unknown>) =>
      liveContainerLimit(parseSandboxConfig(input), 64 * gibibyte);
    expect(limit({ memoryLimit: "4G", maxConcurrent: 16, maxTotalMemory: "8G" })).toBe(2);
    expect(limit({ memoryLimit: "512M", maxConcurrent: 16, maxTotalMemory: "1.9G" })).toBe(3);
    expect(limit({ memoryLimit: "4G", maxConcurrent: 1, maxTotalMemory: "8G" })).toBe(1);
    expect(limit({ memoryLimit: "64M", maxConcurrent: 4, maxTotalMemory: "1T" })).toBe(4);
  });

  it("defaults to this machine's memory: the defaults' 16 x 4 GiB do not all fit on a 23 GiB host", () => {
    const defaults = parseSandboxConfig({ maxConcurrent: 16 });
    expect(defaults.maxTotalMemory).toBeUndefined();
    expect(liveContainerLimit(defaults, 23 * gibibyte)).toBe(5);
    expect(liveContainerLimit(defaults, 128 * gibibyte)).toBe(16);
    // A memoryLimit over the machine's memory still gets one container (the user asked for it).
    expect(liveContainerLimit(parseSandboxConfig({ memoryLimit: "32G" }), 23 * gibibyte)).toBe(1);
  });

  it("refuses a budget under one container's memoryLimit, naming both options and the fix", () => {
    expect(() => parseSandboxConfig({ memoryLimit: "8G", maxTotalMemory: "4G" })).toThrow(
      /maxTotalMemory \("4G"\) is under memoryLimit \("8G"\): not even one container would fit; raise maxTotalMemory or lower memoryLimit/,
    );
    expect(() => parseSandboxConfig({ maxTotalMemory: "lots" })).toThrow(
      /maxTotalMemory must be a size such as "512M" or "4G"/,
    );
  });

  it("names the option for a near miss", () => {
    expect(() => parseSandboxConfig({ maxTotalMem: "8G" })).toThrow(
      /'maxTotalMem' \(did you mean 'maxTotalMemory'\?\)/,
    );
  });
});
