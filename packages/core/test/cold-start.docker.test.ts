import { connectDocker } from "@codeaction/sandbox";
import { describe, expect, it } from "vitest";
import { buildAgent, createProgramRunner } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { programReply } from "./helpers.ts";

// The cold path (no warm pool): the bridge relay is the command each container starts with, so its
// exec goes out before the kill helper's and no exec of its own follows (the sandbox's
// createSession({ command })). Observed through the engine's events.

/** The label the sandbox puts on every container it creates (packages/sandbox/src/container/labels.ts; not exported). */
const ownerPidLabel = "codeaction.owner-pid";

/** This process's containers' exec_create actions since `sinceMs` (Unix ms), by container, in order. */
async function execCreatesByContainer(sinceMs: number): Promise<Map<string, string[]>> {
  const { docker } = await connectDocker();
  const stream = (await docker.getEvents({
    since: Math.floor(sinceMs / 1000) - 1,
    until: Math.floor(Date.now() / 1000) + 1,
    filters: { type: ["container"], event: ["exec_create"], label: [`${ownerPidLabel}=${process.pid}`] },
  })) as NodeJS.ReadableStream;
  let text = "";
  for await (const chunk of stream) text += String(chunk);
  const byContainer = new Map<string, string[]>();
  for (const line of text.split("\n").filter((entry) => entry.trim() !== "")) {
    const event = JSON.parse(line) as { id: string; Action: string; timeNano: number };
    // The query's bound is in whole seconds: an earlier test's events of the same second are not ours.
    if (event.timeNano / 1e6 < sinceMs) continue;
    byContainer.set(event.id, [...(byContainer.get(event.id) ?? []), event.Action]);
  }
  return byContainer;
}

/** What each exec was: the relay, the kill helper, or something else. */
function kinds(actions: string[]): string[] {
  return actions.map((action) =>
    action.includes("The codeaction bridge relay")
      ? "relay"
      : action.includes("codeaction-kill-helper")
        ? "kill-helper"
        : action.slice(0, 60),
  );
}

describe("the cold path starts the relay with the container (real engine)", () => {
  it("a code-action turn with pool 0: the relay is each container's first exec, and the only other is the kill helper", async () => {
    const since = Date.now();
    const model = new ScriptedChatModel([
      programReply('print("RESULT: 1")'),
      programReply('print("RESULT: 2")'),
    ]);
    const agent = await buildAgent({ model, pattern: "code-action", sandbox: { pool: 0 } });
    try {
      const ask = (content: string) => agent.invoke({ messages: [{ role: "user" as const, content }] });
      expect((await ask("one?")).answer).toBe("1");
      expect((await ask("two?")).answer).toBe("2");
    } finally {
      await agent.close();
    }
    const containers = [...(await execCreatesByContainer(since)).values()];
    expect(containers).toHaveLength(2);
    for (const actions of containers) expect(kinds(actions)).toEqual(["relay", "kill-helper"]);
  });

  it("a program runner (run_program over MCP): the same for each run", async () => {
    const since = Date.now();
    const runner = await createProgramRunner({ tools: [] });
    try {
      expect((await runner.run('print("RESULT: 3")')).result).toBe("3");
    } finally {
      await runner.close();
    }
    const containers = [...(await execCreatesByContainer(since)).values()];
    expect(containers.map(kinds)).toEqual([["relay", "kill-helper"]]);
  });
});
