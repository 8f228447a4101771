import type { ProgramRunner, ToolSpec } from "@codeaction/core";
import { renderStubSignatures } from "@codeaction/core/stubs";

/**
 * The runner as the server describes it: only `offered` tools in its list and stubs (run_program's
 * description and list_functions), while runs still go to the whole runner, whose approval hook
 * refuses the others with ToolDenied.
 */
export function offeredRunner(runner: ProgramRunner, offered: readonly ToolSpec[]): ProgramRunner {
  if (offered.length === runner.tools.length) return runner;
  return { ...runner, tools: offered, stubSignatures: renderStubSignatures([...offered]) };
}
