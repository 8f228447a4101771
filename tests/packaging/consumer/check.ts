// Strict type-check of the shipped declarations (module nodenext, skipLibCheck false): what a
// TypeScript user writes against buildAgent, Agent, AgentResult, attempts and an error class, and
// against the public subpaths the codeaction command uses too (a chained log, the stubs).

import type { CliError, CliErrorCode } from "@codeaction/cli";
import {
  type Agent,
  type AgentResult,
  type Attempt,
  type AttemptStatus,
  buildAgent,
  CodeActionError,
  SandboxRunError,
  type ToolSpec,
} from "@codeaction/core";
import { chainedLine, type LineOfFile, type Verification, verifyChain } from "@codeaction/core/durable";
import { buildStubs, renderStubSignatures, type StubbedTool } from "@codeaction/core/stubs";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { type ExecResult, SandboxManager } from "@codeaction/sandbox";
import { tool } from "@langchain/core/tools";
import { z } from "zod";

const lookup = tool(async ({ id }: { id: string }) => ({ id, total: 3 }), {
  name: "lookup",
  description: "Looks an order up.",
  schema: z.object({ id: z.string() }),
});

export async function answer(question: string): Promise<string> {
  const agent: Agent = await buildAgent({
    model: new ScriptedChatModel(["```python\nprint('RESULT: 1')\n```"]),
    pattern: "code-action",
    extraTools: [lookup],
    codeAction: { execTimeout: 30, maxRepairs: 1 },
  });
  try {
    const result: AgentResult = await agent.invoke({ messages: [{ role: "user", content: question }] });
    const statuses: AttemptStatus[] = result.attempts.map((attempt: Attempt) => attempt.status);
    const tools: readonly ToolSpec[] = agent.tools;
    return `${result.answer} (${statuses.join(", ")}; ${tools.length} tools)`;
  } catch (error) {
    if (SandboxRunError.isInstance(error)) return `sandbox failed: ${error.code}`;
    if (error instanceof CodeActionError) return error.message;
    throw error;
  } finally {
    await agent.close();
  }
}

export async function run(): Promise<ExecResult> {
  await using manager = new SandboxManager({ network: "none" });
  await using session = await manager.createSession();
  return session.execute("python3 -V", { timeout: 5 });
}

/** A log of one's own on core's chained log, verified; the stubs a program would see for `tools`. */
export function audit(tools: ToolSpec[]): { verification: Verification; stubs: string; names: string[] } {
  const first = chainedLine({ event: "run" }, undefined, undefined);
  const lines: LineOfFile[] = [{ file: "runs.jsonl", line: 1, text: first }];
  const stubbed: StubbedTool[] = buildStubs(tools);
  return {
    verification: verifyChain(lines, { key: undefined, rotatedStart: false }),
    stubs: renderStubSignatures(tools),
    names: stubbed.map((stub) => stub.functionName),
  };
}

/** The command as a library (`import "@codeaction/cli"`, its bundle): its error class and entry. */
export async function command(args: string[]): Promise<string> {
  const { CliError, run: runCommand }: typeof import("@codeaction/cli") = await import("@codeaction/cli");
  const failure: CliError = new CliError("no such file", { code: "csv-input", exitCode: 2 });
  const code: CliErrorCode = failure.code;
  runCommand(args);
  return code;
}
