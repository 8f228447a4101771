import { type Agent, type BuildAgentOptions, buildAgent } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import type { SandboxConfigInput } from "@codeaction/sandbox";

/** A model reply that is just this program. */
export function fenced(program: string): string {
  return `\`\`\`python\n${program}\n\`\`\``;
}

/** A code-action agent whose instant scripted model always answers with `program`. */
export async function scriptedAgent(options: {
  program: string;
  replies: number;
  sandbox: SandboxConfigInput;
  extra?: Omit<BuildAgentOptions, "model" | "pattern" | "sandbox">;
}): Promise<Agent> {
  const model = new ScriptedChatModel(Array.from({ length: options.replies }, () => fenced(options.program)));
  return buildAgent({ model, pattern: "code-action", sandbox: options.sandbox, ...options.extra });
}

export const question = { messages: [{ role: "user" as const, content: "What is one?" }] };

/** One turn, timed; throws unless it ended ok with the expected answer. */
export async function timedTurn(agent: Agent, expected?: string): Promise<{ ms: number; answer: string }> {
  const started = performance.now();
  const result = await agent.invoke(question);
  const ms = performance.now() - started;
  if (result.status !== "answered" || (expected !== undefined && result.answer !== expected)) {
    throw new Error(
      `a benchmark turn did not succeed: status ${result.status}, answer ${JSON.stringify(result.answer)}`,
    );
  }
  return { ms, answer: result.answer };
}
