import { DATA_IMAGE as dataImage, DEFAULT_IMAGE as defaultImage } from "@codeaction/sandbox/images";
import type { CliContext } from "../context.ts";
import { dataFileArguments } from "../data-files/data-formats.ts";
import { closeSandbox, startSandbox } from "../session/session-sandbox.ts";
import type { ResumeRequest } from "./ask-approval.ts";
import { parseAskArguments } from "./ask-arguments.ts";

// Only what checking the command line and starting the sandbox need is imported up front: one
// question, one container, started in a worker thread now, while LangChain, the data and the model
// load (ask-session.ts and what it imports).

/** `codeaction ask`; with `resume`, `codeaction resume` continuing a kept run with the same options. */
export async function askCommand(
  args: string[],
  context: CliContext,
  resume?: ResumeRequest,
): Promise<number> {
  const request = parseAskArguments(args, context);
  if (!request) return 0;
  const { values, pattern } = request;
  const image =
    pattern === "code-action" ? (values.image ?? (values.data ? dataImage : defaultImage)) : undefined;
  const files = dataFileArguments({ csv: values.csv, file: values.file }, context.cwd);
  const sandbox = await startSandbox({ questions: "one", image, files });
  let askWithSandbox: typeof import("./ask-session.ts").askWithSandbox;
  try {
    ({ askWithSandbox } = await import("./ask-session.ts"));
  } catch (error) {
    await closeSandbox(sandbox);
    throw error;
  }
  return askWithSandbox({ request, context, resume, image, files, sandbox });
}
