import { createInterface } from "node:readline";
import type { ApprovalHook } from "@codeaction/core";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { previewJson } from "./describe-tool-call.ts";

/**
 * Asks on the terminal before each tool call: `allow get-sum {"a":1,"b":2}? [y/N]`. Questions are
 * asked one at a time, in the order the calls come; anything but y or yes refuses the call, and
 * the program sees ToolDenied. Time spent waiting here does not count against the program's limit.
 */
export function createTerminalApproval(output: NodeJS.WritableStream): {
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
    const asked = queue.then(async () => {
      output.write(
        `allow ${escapeForTerminal(call.tool, { keepNewlines: false })} ${previewJson(call.args)}? [y/N] `,
      );
      const answer = (await nextLine()).trim().toLowerCase();
      const approved = answer === "y" || answer === "yes";
      return approved ? true : { approved: false, reason: "refused at the terminal" };
    });
    queue = asked.catch(() => undefined);
    return asked;
  };
  return { hook, close: () => lines.close() };
}
