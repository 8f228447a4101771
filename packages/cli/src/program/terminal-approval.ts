import { createInterface } from "node:readline";
import type { ApprovalHook } from "@codeaction/core";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { previewJson } from "./describe-tool-call.ts";

/** Whether "later" may be answered: `unavailable` says why not (and the question is asked again). */
export type LaterOption = { unavailable?: string };

/**
 * Asks on the terminal before each tool call: `allow get-sum {"a":1,"b":2}? [y/N]`. Questions are
 * asked one at a time, in the order the calls come; anything but y or yes refuses the call, and
 * the program sees ToolDenied. With `later`, the question is `[y/N/later]`, and "later" answers
 * "interrupt": the run stops and waits for `codeaction resume` (when `later.unavailable` is set,
 * it is printed and the question asked again). Time spent waiting here does not count against the
 * program's limit.
 */
export function createTerminalApproval(
  output: NodeJS.WritableStream,
  options: { later?: LaterOption } = {},
): {
  hook: ApprovalHook;
  close(): void;
} {
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
  let queue: Promise<unknown> = Promise.resolve();
  const hook: ApprovalHook = (call) => {
    const { later } = options;
    const question = `allow ${escapeForTerminal(call.tool, { keepNewlines: false })} ${previewJson(call.args)}? [y/N${later ? "/later" : ""}] `;
    const asked = queue.then(async () => {
      for (;;) {
        output.write(question);
        const answer = (await nextLine()).trim().toLowerCase();
        if (answer === "y" || answer === "yes") return true;
        if (!later || answer !== "later") return { approved: false, reason: "refused at the terminal" };
        if (later.unavailable === undefined) return "interrupt" as const;
        output.write(`${later.unavailable}\n`);
        if (closed && answers.length === 0) return { approved: false, reason: "refused at the terminal" };
      }
    });
    queue = asked.catch(() => undefined);
    return asked;
  };
  return { hook, close: () => lines.close() };
}
