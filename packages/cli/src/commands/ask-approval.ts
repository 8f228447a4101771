// `ask --approve` and `codeaction resume`: the terminal's approval with "later", the secret that
// signs a kept state, and what an interrupted run prints.
import type { ApprovalHook, InterruptedResult, ResumeDecision, UsedStates } from "@codeaction/core";
import type { CliContext } from "../context.ts";
import { createTerminalApproval, type QuestionHold } from "../program/terminal-approval.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import type { AskRequest } from "./ask-arguments.ts";

/** The environment variable holding the key that signs and checks kept run states. */
export const resumeSecretVariable = "CODEACTION_RESUME_SECRET";

/** A run `codeaction resume` continues: its kept state (checked by the agent) and the decision. */
export type ResumeRequest = {
  runId: string;
  state: unknown;
  decision: ResumeDecision;
  /** Where the consumed states are recorded (beside the journal): a state is resumed once. */
  usedStates: UsedStates;
};

/** The resume secret from the environment, or undefined when unset or empty. */
export function resumeSecret(env: NodeJS.ProcessEnv): string | undefined {
  const secret = env[resumeSecretVariable];
  return secret === undefined || secret === "" ? undefined : secret;
}

/**
 * The approval hook of `ask --approve` (and of a resumed run's further calls): asked on the
 * terminal, with "later" for code-action runs. "Later" needs the secret that signs the state and
 * the journal that keeps it; without either, the terminal says so and asks again.
 */
export function terminalApprovalFor(
  request: AskRequest,
  context: CliContext,
  options: { journaled: boolean; resuming: boolean; progress: QuestionHold },
): { hook: ApprovalHook; close(): void } | undefined {
  if (request.values.approve !== true && !options.resuming) return undefined;
  const { progress } = options;
  if (request.pattern !== "code-action") return createTerminalApproval(context.stderr, { progress });
  const unavailable = !options.journaled
    ? 'codeaction: "later" keeps the run in the journal, and --no-journal is set: answer y or n'
    : resumeSecret(context.env) === undefined
      ? `codeaction: "later" needs ${resumeSecretVariable} set: the key (at least 16 bytes, e.g. openssl rand -hex 32) that signs the kept state, the same for codeaction resume; answer y or n`
      : undefined;
  return createTerminalApproval(context.stderr, { later: unavailable ? { unavailable } : {}, progress });
}

/** What an interrupted run prints on stderr: the call that waits, and the command that continues it. */
export function reportInterrupted(result: InterruptedResult, context: CliContext, kept: boolean): void {
  const { runId, pending } = result.interrupt;
  const call = `${pending.tool} ${JSON.stringify(pending.args)}`;
  const lines = kept
    ? [
        `codeaction: run ${runId} waits for a decision on ${call}; no container is left, and its state is in the journal.`,
        `codeaction: to continue it, with ${resumeSecretVariable} set as now and the same data, tool and model options:`,
        `  codeaction resume ${runId} --approve    (or --deny)`,
      ]
    : [
        `codeaction: run ${runId} stopped before ${call}, and its state could not be kept: it cannot be resumed.`,
      ];
  context.stderr.write(`${escapeForTerminal(lines.join("\n"))}\n`);
}
