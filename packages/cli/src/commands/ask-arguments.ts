// `codeaction ask`: its help text and its checked command line.
import { DATA_IMAGE as dataImage, DEFAULT_IMAGE as defaultImage } from "@codeaction/sandbox/images";
import { choiceOption, parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { UsageError } from "../errors/usage-error.ts";
import { defaultJournalPath } from "../journal/append.ts";
import { answerFormats } from "../terminal/format-answer.ts";
import { modelTimeoutOption, questionOptions, retriesOption, stepsOption } from "./question-options.ts";

// Only what checking the command line needs is imported up front; LangChain, the sandbox and the
// CSV parser load once the arguments are known to be good.

export const askHelp = `Usage: codeaction ask [options] "question"

Answers a question with a code-action agent: the model writes one Python program that calls the
tools below as functions, the program runs in a fresh Docker sandbox with no network, and the
answer is the value of its last \`RESULT:\` line. Only the answer goes to stdout; progress, the
model in use and --show-program go to stderr.

Data:
  --csv FILE            a CSV file; the program gets load_<name>() returning typed rows
                        (ints, floats, booleans inferred per column; blank cells None), and the
                        file itself, read-only, at /workspace/data/<file name> (repeatable)
  --file FILE           a data file, its format from the extension: .csv, .tsv, .json (an array
                        of records), .jsonl, .xlsx (the first sheet; pandas reads it in --data)
                        or .parquet (placed in the sandbox converted to CSV: the image has no
                        parquet reader); load_<name>() and /workspace/data as for --csv (repeatable)
  --server "CMD"        an MCP server started with this command line (stdio), or an http(s) URL;
                        its tools join the CSV tools (repeatable)

Model:
  --model M             live model, default openai:gpt-5-mini (needs OPENAI_API_KEY;
                        OPENAI_BASE_URL for a local OpenAI-compatible server); another
                        provider as provider:model, such as anthropic:claude-sonnet-4-5 (its
                        LangChain package installed beside codeaction, its key set)
  --replay FILE         play recorded replies instead: {"replies": ["<reply 1>", ...]}
  --retries N           try a failed model call again up to N times (default 2; 0 for never),
                        after 1 s, 2 s, 4 s...; only for HTTP 408, 409, 429, 5xx or no answer,
                        each retry shown on stderr (a provider's Retry-After is followed, up to 60 s)
  --model-timeout S     seconds one model call may take before it fails as a timeout and is
                        retried (default 90)
  --pattern P           code-action (default) or tools (a tool-calling chat loop, no sandbox)
  --steps N             let the model take up to N programs (default 1): a program that prints
                        no RESULT line shows the model its output, and the next one runs in the
                        same live interpreter (its variables and loaded data kept)

Sandbox:
  --image NAME          the sandbox image (default ${defaultImage})
  --data                the data image, ${dataImage} (numpy, pandas)

Output:
  --format F            table, json, csv or text (the answer as the program printed it);
                        default: table on a terminal, text otherwise. A list of records is an
                        aligned table, a dict key/value lines, anything else itself
  --out DIR             where files the program saves under /workspace/out are written:
                        DIR/<runId>/ (default ./codeaction-out/<runId>/); their paths go to stderr
  --show-program        also show (on stderr) each program, each tool call and the timings
  --verbose             also show (on stderr) the program's output as it runs, and a usage line
  --quiet               no progress on stderr (on a terminal it shows the step, and rows and
                        bytes while a file is read)
  --json                print the whole run record as JSON instead of the answer
  --approve             ask on the terminal before each tool call: y, n, or later (code-action:
                        the run stops, no container is left, its state is kept in the journal;
                        resume it with codeaction resume RUN_ID --approve or --deny; "later"
                        needs CODEACTION_RESUME_SECRET, the key that signs the kept state)
  --journal PATH        append the run record here (default ${defaultJournalPath})
  --no-journal          do not write the run record
  --debug               debug logs on stderr, stack traces on errors
  -h, --help            show this help

Example:
  codeaction ask --csv examples/data/orders.csv \\
    "What was the revenue per region in Q3 2026 (July to September)? Revenue is quantity times unit price."`;

export const askOptions = {
  ...questionOptions,
  pattern: { type: "string" },
  "show-program": { type: "boolean" },
  verbose: { type: "boolean" },
  json: { type: "boolean" },
  journal: { type: "string" },
  "no-journal": { type: "boolean" },
  approve: { type: "boolean" },
} as const;

export type AskRequest = NonNullable<ReturnType<typeof parseAskArguments>>;

/** The checked command line, or undefined after printing the help. */
export function parseAskArguments(args: string[], context: CliContext) {
  const command = "ask";
  const { values, positionals } = parseCommandArguments(command, args, askOptions);
  if (values.help) {
    context.stdout.write(`${askHelp}\n`);
    return undefined;
  }
  const question = positionals.join(" ").trim();
  if (question === "")
    throw new UsageError({ command, message: 'give the question, in quotes: codeaction ask "..."' });
  const pattern =
    choiceOption(command, "pattern", values.pattern, ["code-action", "tools"] as const) ?? "code-action";
  if (values.image !== undefined && values.data) {
    throw new UsageError({ command, message: "--image and --data cannot be combined" });
  }
  const format =
    choiceOption(command, "format", values.format, answerFormats) ??
    (context.stdout.isTTY ? "table" : "text");
  if (values.format !== undefined && values.json) {
    throw new UsageError({ command, message: "--format and --json cannot be combined" });
  }
  if (values.journal !== undefined && values["no-journal"]) {
    throw new UsageError({ command, message: "--journal and --no-journal cannot be combined" });
  }
  if (pattern === "tools" && (values.image !== undefined || values.data)) {
    throw new UsageError({
      command,
      message: "--image and --data choose the sandbox of --pattern code-action",
    });
  }
  if (values.approve && process.stdin.isTTY !== true) {
    throw new UsageError({
      command,
      message:
        "--approve asks on a terminal, and stdin is not one: run it in a terminal, or leave --approve out",
    });
  }
  const retries = retriesOption(command, values.retries);
  return {
    values,
    question,
    pattern,
    format,
    retries,
    modelTimeout: modelTimeoutOption(command, values["model-timeout"]),
    steps: stepsOption(command, values.steps),
    showProgram: values["show-program"] === true,
    verbose: values.verbose === true,
  };
}
