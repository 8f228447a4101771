import type { ToolSpec } from "@codeaction/core";
import { fromLangChainTool } from "@codeaction/core";
import { SandboxManager } from "@codeaction/sandbox";
import { tool } from "@langchain/core/tools";
import type Dockerode from "dockerode";
import { z } from "zod";
import { scriptedAgent } from "./agents.ts";
import { runReferenceBridge } from "./reference-bridge.ts";

/** The no-op tool every variant calls. */
export const noopTool = tool(async () => "ok", {
  name: "noop",
  description: "Does nothing and returns ok.",
  schema: z.object({}),
});

/** Calls noop() `count` times and prints each call's milliseconds, measured in the program. */
export function callLoopProgram(count: number): string {
  return [
    "import json, time",
    "durations = []",
    `for _ in range(${count}):`,
    "    started = time.perf_counter()",
    "    noop()",
    "    durations.append((time.perf_counter() - started) * 1000)",
    'print("RESULT: " + json.dumps(durations))',
  ].join("\n");
}

export type CallSamples = { inProcess: number[]; bridge: number[]; reference: number[] };

/**
 * Per-call cost of a no-op tool, rounds interleaved:
 *   inProcess: the ToolSpec the bridge calls, invoked in this process (the floor)
 *   bridge:    our bridge, `calls` calls in one program of a code-action turn
 *   reference: the reference protocol (reference-bridge.ts), `referenceCalls` calls (it is slow)
 */
export async function measureToolCallCost(options: {
  docker: Dockerode;
  rounds: number;
  calls: number;
  referenceCalls: number;
  onProgress?: (message: string) => void;
}): Promise<CallSamples> {
  const spec: ToolSpec = fromLangChainTool(noopTool);
  const agent = await scriptedAgent({
    program: callLoopProgram(options.calls),
    replies: options.rounds,
    sandbox: {},
    extra: { extraTools: [noopTool], codeAction: { maxToolCalls: options.calls + 10 } },
  });
  const manager = new SandboxManager({});
  await manager.ready();
  const samples: CallSamples = { inProcess: [], bridge: [], reference: [] };
  const controller = new AbortController();
  try {
    for (let round = 0; round < options.rounds; round += 1) {
      for (let call = 0; call < options.calls; call += 1) {
        const started = performance.now();
        await spec.invoke({}, { runId: "in-process", signal: controller.signal });
        samples.inProcess.push(performance.now() - started);
      }
      const result = await agent.invoke({ messages: [{ role: "user", content: "Call noop." }] });
      if (result.status !== "answered") throw new Error(`the bridge run failed: ${result.status}`);
      samples.bridge.push(...(JSON.parse(result.answer) as number[]));
      const session = await manager.createSession();
      try {
        const run = await runReferenceBridge({
          docker: options.docker,
          session,
          program: `${callLoopProgram(options.referenceCalls)}\n`,
          tools: [spec],
        });
        const line = run.stdout.split("\n").find((text) => text.startsWith("RESULT: "));
        if (run.exitCode !== 0 || !line)
          throw new Error(`the reference run failed: ${run.stderr.slice(-300)}`);
        samples.reference.push(...(JSON.parse(line.slice(8)) as number[]));
      } finally {
        await session.close();
      }
      options.onProgress?.(`tool-call cost round ${round + 1}/${options.rounds}`);
    }
  } finally {
    await Promise.allSettled([agent.close(), manager.close()]);
  }
  return samples;
}
