import type { SandboxManager } from "@codeaction/sandbox";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ToolSpec } from "../../packages/core/src/tool-spec.ts";
import { backends, echoTool, readyManager, runCase } from "../support/harness.ts";

// The red team's second round (docs/security.md, H cases): whatever a program sends over the bridge,
// what the host process keeps for its run stays bounded, and abuse ends the run as the program's
// failure. Each case failed on the code before these bounds.

/** A tool whose result is larger than the bridge's 16 MiB answer limit. */
const oversizedTool: ToolSpec = {
  name: "oversized",
  description: "Returns 17 MiB.",
  origin: "tool",
  inputSchema: { type: "object", properties: {} },
  invoke: async () => "y".repeat(17 * 1024 * 1024),
};

describe.each(backends)("the host stays bounded (backend %s)", (backend) => {
  let manager: SandboxManager;
  beforeAll(async () => {
    manager = await readyManager(backend);
  });
  afterAll(async () => {
    await manager?.cleanupAll();
  });

  test("H1, H2: 1 MiB arguments (known, unknown and over-the-cap tools) and a 17 MiB result are recorded as sizes and previews", async () => {
    const { tool, calls } = echoTool();
    const run = await runCase(manager, {
      tools: [tool, oversizedTool],
      maxToolCalls: 6,
      program: `
import json
from codeaction_tools import _call
payload = "{}" * (512 * 1024 - 64)
seen = []
try:
    oversized()
except ToolError as error:
    seen.append(str(error))
for name in ["echo", "nope", "echo", "nope", "echo", "echo", "echo"]:
    try:
        _call(name, {"value": payload})
        seen.append("ok")
    except ToolError as error:
        seen.append(type(error).__name__)
print("RESULT:", json.dumps(seen))
`,
    });
    expect(run.status, run.stderr).toBe("tool-limit");
    const seen = JSON.parse(run.result ?? "[]") as string[];
    expect(seen[0]).toMatch(/over the bridge's limit of 16777216/);
    expect(seen.slice(1)).toEqual([
      "ok",
      "ToolError",
      "ok",
      "ToolError",
      "ok",
      "ToolCallLimitExceeded",
      "ToolCallLimitExceeded",
    ]);
    expect(calls).toHaveLength(3);
    expect(run.toolCalls).toHaveLength(8);
    // About 24 MiB went through the bridge; its records keep a few kB.
    expect(JSON.stringify(run.toolCalls).length).toBeLessThan(40_000);
    expect(run.toolCalls[0]).toMatchObject({
      tool: "oversized",
      status: "error",
      resultBytes: 17 * 1024 * 1024 + 2,
    });
    for (const call of run.toolCalls.slice(1)) {
      expect(call.requestBytes).toBeGreaterThan(1024 * 1024 - 200);
      expect(call.args).toBeUndefined();
    }
    expect(run.toolCalls.map((call) => call.status)).toEqual([
      "error",
      "ok",
      "unknown-tool",
      "ok",
      "unknown-tool",
      "ok",
      "limit",
      "limit",
    ]);
  });

  test("H3: ringing the doorbell with valid ids and no request files ends the run as a tool-limit failure", async () => {
    const run = await runCase(manager, {
      maxToolCalls: 10,
      execTimeout: 60,
      program: `
import itertools, os
fd = int(os.environ["CODEACTION_REQUEST_FD"])
for index in itertools.count():
    os.write(fd, b"ring%d\\n" % index)
`,
    });
    expect(run.status).toBe("tool-limit");
    expect(run.toolCalls.length).toBeLessThanOrEqual(10 + 100);
    expect(run.toolCalls.every((call) => call.status === "invalid" || call.status === "limit")).toBe(true);
  });

  test("H6: a program that kills its own relay fails as an error it can repair, not as infrastructure", async () => {
    const run = await runCase(manager, {
      program: `
import os, signal, time
os.kill(os.getppid(), signal.SIGKILL)
time.sleep(5)
print("RESULT: never")
`,
    });
    expect(run.status).toBe("error");
    expect(run.infrastructureError).toBeUndefined();
    expect(run.stderr).toMatch(/the bridge relay was killed by signal 9/);
  });
});
