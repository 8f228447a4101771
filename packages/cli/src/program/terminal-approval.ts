import { createInterface } from "node:readline";
import type { ApprovalHook } from "@codeaction/core";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { previewJson } from "./describe-tool-call.ts";

/** Whether "later" may be answered: `unavailable` says why not (and the question is asked again). */
export type LaterOption = { unavailable?: string };

/**
 * Asks `question` and resolves with the line answered ("" when the input ended). `chat` passes its
 * own line reader: a second reader on stdin would take the session's next question as an answer.
 * `signal` aborts when the call no longer waits (the turn cancelled, the program ended).
 */
export type AnswerReader = (question: string, signal?: AbortSignal) => Promise<string>;

/**
 * Asks on the terminal before each tool call: `allow get-sum {"a":1,"b":2}? [y/N]`, after a line
 * saying an answer is awaited; `progress` (the spinner) is held off meanwhile. Questions are asked
 * one at a time, in the order the calls come; y or yes approves, n, no or Enter refuses (the
 * program sees ToolDenied), anything else is said not to be an answer and the question asked again. With `later`, the question is `[y/N/later]`, and "later" answers
 * "interrupt": the run stops and waits for `codeaction resume` (when `later.unavailable` is set,
 * it is printed and the question asked again). Time spent waiting here does not count against the
 * program's limit.
 */
export function createTerminalApproval(
  output: NodeJS.WritableStream,
  options: { later?: LaterOption; readAnswer?: AnswerReader; progress?: QuestionHold } = {},
): {
  hook: ApprovalHook;
  close(): void;
} {
  const { readAnswer, later, progress } = options;
  const stdin = readAnswer ? undefined : readStdinLines(output);
  const ask =
    readAnswer ??
    ((question: string) => {
      output.write(question);
      return stdin!.nextLine();
    });
  const choices = later ? "y, n or later" : "y or n";
  let queue: Promise<unknown> = Promise.resolve();
  const hook: ApprovalHook = (call) => {
    // A resumed run's pending call: the decision was given to codeaction resume, not asked again.
    if (call.resumeDecision === "approved") return true;
    const question = `allow ${escapeForTerminal(call.tool, { keepNewlines: false })} ${previewJson(call.args)}? [y/N${later ? "/later" : ""}] `;
    const asked = queue.then(async () => {
      // The spinner stays off while the question is open: its redraw would erase the question.
      progress?.hold();
      output.write(`codeaction: waiting for your answer (${choices}; Enter: n):\n`);
      try {
        for (;;) {
          const answer = (await ask(question, call.signal)).trim().toLowerCase();
          if (answer === "y" || answer === "yes") return true;
          if (answer === "" || answer === "n" || answer === "no") return refused;
          if (later && answer === "later") {
            if (later.unavailable === undefined) return "interrupt" as const;
            output.write(`${later.unavailable}\n`);
          } else {
            const shown = escapeForTerminal(answer.slice(0, 40), { keepNewlines: false });
            output.write(`codeaction: "${shown}" is not an answer: type ${choices} (Enter: n)\n`);
          }
          if (stdin?.ended() || call.signal?.aborted) return refused;
        }
      } finally {
        progress?.release();
      }
    });
    queue = asked.catch(() => undefined);
    return asked;
  };
  return { hook, close: () => stdin?.close() };
}

const refused = { approved: false, reason: "refused at the terminal" };

/** What keeps the progress spinner off while a question is open (Progress has it). */
export type QuestionHold = { hold(): void; release(): void };

/** stdin's lines, one at a time, as they are asked for (a few typed ahead are kept). */
function readStdinLines(output: NodeJS.WritableStream) {
  const lines = createInterface({ input: process.stdin, output, terminal: false });
  const answers: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  let closed = false;
  lines.on("line", (line) => {
    const resolve = waiting.shift();
    if (resolve) resolve(line);
    else if (answers.length < 16) answers.push(line);
  });
  lines.on("close", () => {
    closed = true;
    for (const resolve of waiting.splice(0)) resolve("");
  });
  const nextLine = () =>
    new Promise<string>((resolve) => {
      const line = answers.shift();
      if (line !== undefined || closed) resolve(line ?? "");
      else waiting.push(resolve);
    });
  return { nextLine, ended: () => closed && answers.length === 0, close: () => lines.close() };
}
