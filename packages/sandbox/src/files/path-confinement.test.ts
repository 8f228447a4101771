import { describe, expect, it } from "vitest";
import { PathRefusedError } from "../errors/path-refused-error.ts";
import { resolveSandboxPath } from "./path-confinement.ts";

describe("resolveSandboxPath", () => {
  const options = { workdir: "/workspace" };
  it("resolves relative paths at the workdir and keeps /workspace and /tmp", () => {
    expect(resolveSandboxPath("a/b.txt", options)).toBe("/workspace/a/b.txt");
    expect(resolveSandboxPath("/workspace", options)).toBe("/workspace");
    expect(resolveSandboxPath("/tmp/x", options)).toBe("/tmp/x");
    expect(resolveSandboxPath("/workspace/a/../b", options)).toBe("/workspace/b");
  });
  it("refuses escapes, look-alike folders, NUL bytes and empty paths with a clear error", () => {
    for (const path of [
      "../etc/passwd",
      "/workspace2",
      "/workspace2/x",
      "/etc/passwd",
      "a\0b",
      "",
      "/tmpfoo",
      "/",
    ]) {
      let caught: unknown;
      try {
        resolveSandboxPath(path, options);
      } catch (error) {
        caught = error;
      }
      expect(PathRefusedError.isInstance(caught), path).toBe(true);
      expect((caught as Error).message).toContain("confined to /workspace and /tmp");
    }
  });
});
