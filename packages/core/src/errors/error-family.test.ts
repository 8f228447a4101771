import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as core from "../index.ts";
import * as testing from "../testing/index.ts";
import { ScriptedChatModel } from "../testing/index.ts";

// One error family: what a user of @codeaction/core can catch is exported from it (or from its
// testing entry point) and recognised by CodeActionError.isInstance; sandbox settings refused by the
// sandbox package arrive as a ConfigError whose message reads cleanly.

const errorFiles = readdirSync(new URL(".", import.meta.url)).filter(
  (name) => name.endsWith("-error.ts") && name !== "code-action-error.ts",
);

function className(file: string): string {
  return file
    .replace(/\.ts$/, "")
    .split("-")
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join("");
}

describe("core's errors", () => {
  it("every error class of core is exported from @codeaction/core or its testing entry point", () => {
    expect(errorFiles.length).toBeGreaterThan(10);
    const missing = errorFiles.map(className).filter((name) => !(name in core) && !(name in testing));
    expect(missing).toEqual([]);
  });

  it("unknown sandbox keys given to buildAgent are a ConfigError, recognised by CodeActionError.isInstance", async () => {
    const error = await core
      .buildAgent({
        model: new ScriptedChatModel([]),
        pattern: "code-action",
        sandbox: { netwrk: "none" } as never,
      })
      .catch((thrown: unknown) => thrown);
    expect(core.ConfigError.isInstance(error)).toBe(true);
    expect(core.CodeActionError.isInstance(error)).toBe(true);
    expect(core.SandboxConfigError.isInstance((error as Error).cause)).toBe(true);
    const message = (error as Error).message;
    expect(message).toMatch(
      /^Invalid sandbox settings: unknown sandbox option 'netwrk' \(did you mean 'network'\?\)\. Valid options: backend, /,
    );
    expect(message).not.toMatch(/\?\.|\.\.|: '/);
  });

  it("createCodeActionSandbox and the tools pattern's shell mode refuse bad settings the same way", async () => {
    const direct = (() => {
      try {
        return core.createCodeActionSandbox({ memroyLimit: "1G" } as never);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(core.ConfigError.isInstance(direct)).toBe(true);
    expect((direct as Error).message).toContain(
      "unknown sandbox option 'memroyLimit' (did you mean 'memoryLimit'?)",
    );
    const shell = await core
      .buildAgent({ model: new ScriptedChatModel([]), pattern: "tools", sandbox: { cpuLimit: -1 } })
      .catch((thrown: unknown) => thrown);
    expect(core.ConfigError.isInstance(shell)).toBe(true);
    expect((shell as Error).message).toContain("cpuLimit");
  });
});
