import { DATA_IMAGE } from "@codeaction/sandbox/images";
import { escapeForTerminal } from "./escape-for-terminal.ts";

/** Modules the data image has and the base image lacks. */
const dataImageModules = new Set(["numpy", "pandas", "matplotlib", "openpyxl"]);

const maxLineLength = 200;

/**
 * The line a Python traceback ends with ("ModuleNotFoundError: No module named 'pandas'"): the
 * last line of `stderr` that starts with an exception's name, or undefined when there is none.
 */
export function lastErrorLine(stderr: string): string | undefined {
  const lines = stderr.split("\n").map((line) => line.trimEnd());
  const found = lines.findLast((line) =>
    /^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)(:|$)/.test(line),
  );
  if (found === undefined) return undefined;
  return found.length > maxLineLength ? `${found.slice(0, maxLineLength - 3)}...` : found;
}

/** The fix for an error line, where one is known: a module the data image has, or one no image of ours has. */
export function knownFix(errorLine: string, image: string | undefined): string | undefined {
  const missing = /^ModuleNotFoundError: No module named '([\w.]+)'/.exec(errorLine)?.[1];
  if (missing === undefined) return undefined;
  const module = missing.split(".")[0] ?? missing;
  if (dataImageModules.has(module) && image !== DATA_IMAGE) {
    return `${module} is in the data image: run again with --data (numpy, pandas, matplotlib, openpyxl)`;
  }
  return `the sandbox image has no ${module} and a program cannot pip install it: build an image that has it (codeaction image build --base-image IMAGE --tag NAME) and pass --image NAME`;
}

/**
 * The lines `ask` prints when an attempt failed and the model is asked for a corrected program:
 * why (the core's reason, without its closing period), the traceback's last line when the program
 * wrote one, and a fix when one is known.
 */
export function describeAttemptFailure(options: {
  attempt: number;
  reason: string;
  stderrTail?: string | undefined;
  image?: string | undefined;
}): string[] {
  const reason = options.reason.trim().replace(/\.$/, "");
  const errorLine = options.stderrTail ? lastErrorLine(options.stderrTail) : undefined;
  const shown = escapeForTerminal(errorLine ? `${reason}: ${errorLine}` : reason, { keepNewlines: false });
  const lines = [`attempt ${options.attempt} failed: ${shown}; asking the model for a corrected program`];
  const fix = errorLine ? knownFix(errorLine, options.image) : undefined;
  if (fix) lines.push(`codeaction: ${escapeForTerminal(fix, { keepNewlines: false })}`);
  return lines;
}
