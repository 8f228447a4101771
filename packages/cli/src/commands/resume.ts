import { resolve } from "node:path";
import { createFileUsedStates, type ResumeDecision } from "@codeaction/core";
import type { CliContext } from "../context.ts";
import { CliError } from "../errors/cli-error.ts";
import { UsageError } from "../errors/usage-error.ts";
import { defaultJournalPath } from "../journal/append.ts";
import { createJournalStore } from "../journal/journal-store.ts";
import { bindDecision } from "../journal/resume-check.ts";
import { askCommand } from "./ask.ts";
import { resumeSecret, resumeSecretVariable } from "./ask-approval.ts";

export const resumeHelp = `Usage: codeaction resume RUN_ID (--approve | --deny [--reason TEXT]) [ask's options]

Continues a run that \`codeaction ask --approve\` (or a turn of \`codeaction chat --approve\`)
stopped when "later" was answered. First the journal's chain is verified (every record must
carry its HMAC when CODEACTION_JOURNAL_KEY is set), the run's state is checked with
${resumeSecretVariable} (the key it was signed with) and must be signed for RUN_ID. The run is then
taken: a line appended to the journal names this process, and another resume of the run is refused
while this one runs (a take whose process is gone, killed or crashed, does not hold the run). The
call that waits is printed from the signed state, and the state is recorded as used (a state is
resumed once). Its program runs again in a fresh sandbox with no model call, the calls it made before are
answered from its log (no tool is called twice), and the call that waited gets the decision:
--approve makes it, --deny raises ToolDenied in the program. From there the program runs live
(further calls are asked on the terminal, as with --approve). The answer is printed as ask prints
it, and the resumed run is journaled: a run is resumed once, by one process at a time.

Give the same data, tool and model options the run was asked with (--csv, --file, --server,
--model or --replay, --image or --data, --journal): the program needs the same tools. A chat
turn's answer arrives here, not in the chat session it was asked in.

Options:
  --approve       make the call that waits
  --deny          refuse it (the program sees ToolDenied)
  --reason TEXT   with --deny: the reason the program sees
  -h, --help      show this help

Exit codes: 0 answered, 1 failure (or the state refused), 2 usage error, 3 waiting again.`;

/** `codeaction resume RUN_ID --approve|--deny [ask's options]`. */
export async function resumeCommand(args: string[], context: CliContext): Promise<number> {
  const command = "resume";
  if (args.includes("-h") || args.includes("--help")) {
    context.stdout.write(`${resumeHelp}\n`);
    return 0;
  }
  const [runId, ...rest] = args;
  if (runId === undefined || runId.startsWith("-")) {
    throw new UsageError({ command, message: "give the run id first: codeaction resume RUN_ID --approve" });
  }
  const { decision, askArgs } = takeDecision(rest);
  if (askArgs.includes("--no-journal")) {
    throw new UsageError({
      command,
      message: "--no-journal cannot be used: the resumed run is journaled so that it is resumed once",
    });
  }
  const secret = resumeSecret(context.env);
  if (secret === undefined) {
    throw new CliError(
      `codeaction resume needs ${resumeSecretVariable}: set it to the key the run's state was signed with when ask kept it (the same value as then). Without it the state cannot be checked, and a forged state could make the program believe any tool result.`,
      { code: "resume-secret" },
    );
  }
  const journal = resolve(context.cwd, journalOf(askArgs) ?? defaultJournalPath);
  // The run's state, handed to this process once: another resume of the run is refused until this
  // one journals its answer (or ends without one).
  const run = await createJournalStore(journal, { env: context.env, secret }).take(runId);
  return await askCommand([...askArgs, "--", run.question ?? ""], context, {
    runId,
    state: run.state,
    decision: bindDecision(run.state, decision, context),
    usedStates: createFileUsedStates(`${journal}.used-states`),
  });
}

/** --approve, or --deny with its --reason, taken out of the arguments; the rest are ask's. */
function takeDecision(args: string[]): { decision: ResumeDecision; askArgs: string[] } {
  const askArgs: string[] = [];
  let approve = false;
  let deny = false;
  let reason: string | undefined;
  for (let index = 0; index < args.length; index += 1) {
    const argument = args[index]!;
    if (argument === "--approve") approve = true;
    else if (argument === "--deny") deny = true;
    else if (argument === "--reason") reason = args[++index];
    else if (argument.startsWith("--reason=")) reason = argument.slice("--reason=".length);
    else askArgs.push(argument);
  }
  const command = "resume";
  if (approve === deny) {
    throw new UsageError({ command, message: "give the decision: --approve or --deny (one of them)" });
  }
  if (reason !== undefined && !deny) throw new UsageError({ command, message: "--reason goes with --deny" });
  if (approve) return { decision: true, askArgs };
  return { decision: { approved: false, reason: reason ?? "denied with codeaction resume --deny" }, askArgs };
}

function journalOf(args: string[]): string | undefined {
  const index = args.indexOf("--journal");
  if (index !== -1) return args[index + 1];
  return args.find((argument) => argument.startsWith("--journal="))?.slice("--journal=".length);
}
