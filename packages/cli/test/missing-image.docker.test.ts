import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repositoryRoot, runCli } from "./run-cli.ts";

// The real engine has no image by this name: the error says how to build one under it, for a user
// of the installed command (not the repository's `pnpm setup`).

describe("codeaction ask --image NAME that the engine does not have", () => {
  it("suggests codeaction image build --tag NAME", async () => {
    const image = "acme/python:3.12-codeaction-test-absent";
    const replay = join(repositoryRoot, "packages/cli/replays/first-run.json");
    const run = await runCli([
      "ask",
      "--no-journal",
      "--image",
      image,
      "--replay",
      replay,
      "Sum of squares?",
    ]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(`The sandbox image "${image}" is not present in the Docker engine.`);
    expect(run.stderr).toContain(`codeaction image build --tag ${image}`);
    expect(run.stderr).not.toContain("pnpm setup");
  });
});
