import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { buildAgent } from "../build-agent.ts";
import { SandboxUnavailableError } from "../errors/sandbox-unavailable-error.ts";
import { ScriptedChatModel } from "../testing/index.ts";

// Shell mode end to end: buildAgent with `sandbox` and no code-action pattern gives the tool loop
// the five sandbox tools over one container, which close() removes.

const run = promisify(execFile);

describe("buildAgent in shell mode", () => {
  it("keeps one container for the agent's life, shared by every call, and removes it on shutdown", async () => {
    const model = new ScriptedChatModel([
      {
        toolCalls: [
          {
            name: "sandbox_write_file",
            args: { path: "/workspace/scripts/fib.py", content: "print(8 + 5)\n" },
          },
        ],
      },
      "written",
      // A second question to the same agent: the file is still there.
      {
        toolCalls: [
          { name: "sandbox_exec", args: { command: "python3 scripts/fib.py; cat /proc/self/mountinfo" } },
        ],
      },
      "13",
    ]);
    const agent = await buildAgent({ model, sandbox: { network: "none" } });
    try {
      expect(agent.pattern).toBe("tools");
      expect(agent.tools.map((tool) => tool.name)).toEqual([
        "sandbox_exec",
        "sandbox_read_file",
        "sandbox_write_file",
        "sandbox_list_files",
        "sandbox_install_package",
      ]);

      await agent.invoke({ messages: [{ role: "user", content: "Write the script." }] });
      const second = await agent.invoke({ messages: [{ role: "user", content: "Run it." }] });

      expect(second.answer).toBe("13");
      const output = String(model.calls[3]?.messages.at(-1)?.content);
      expect(output).toMatch(/^exit code: 0 .*\nstdout:\n13\n/s);
      const containerId = /\/containers\/([0-9a-f]{64})\//.exec(output)?.[1];
      expect(containerId).toBeDefined();
      const running = await run("docker", ["inspect", "--format", "{{.State.Running}}", containerId ?? ""]);
      expect(running.stdout.trim()).toBe("true");

      await agent.close();
      const after = await run("docker", ["inspect", containerId ?? ""]).catch(
        (error: { stderr: string }) => error,
      );
      expect(String((after as { stderr: string }).stderr)).toMatch(/No such (object|container)/);
    } finally {
      await agent.close();
    }
  });

  it("starts its container while the model thinks: a start that fails after the engine checks fails the turn that needs it", async () => {
    // The engine accepts the settings (ready() passes) but refuses the container itself: more
    // CPUs (256, the most the settings accept) than the machine has. Before, buildAgent waited for the container;
    // now it hands the agent back at once, the model is called, and the first sandbox tool call
    // finds the failed start.
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: "sandbox_exec", args: { command: "echo never" } }] },
      "not reached",
    ]);
    const agent = await buildAgent({ model, sandbox: { network: "none", cpuLimit: 256 } });
    try {
      const failure = await agent.invoke({ messages: [{ role: "user", content: "Run it." }] }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(SandboxUnavailableError.isInstance(failure)).toBe(true);
      expect((failure as Error).message).toMatch(/requires a working Docker sandbox.*CPUs/s);
      // The model was asked before the container's fate was known, and never saw the failure as a tool result.
      expect(model.calls).toHaveLength(1);
    } finally {
      await agent.close();
    }
  });
});
