import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createTerminalApproval } from "./terminal-approval.ts";

// The terminal approval with a reader of its own (`chat --approve` reads through its session):
// each question goes to the reader, with the call's signal, and its answers decide.

function recorder(answers: string[]) {
  const output = new PassThrough();
  let written = "";
  output.setEncoding("utf8").on("data", (chunk: string) => {
    written += chunk;
  });
  const asked: Array<{ question: string; signal: AbortSignal | undefined }> = [];
  const readAnswer = async (question: string, signal?: AbortSignal) => {
    asked.push({ question, signal });
    return answers.shift() ?? "";
  };
  return { output, asked, readAnswer, written: () => written };
}

const call = (signal?: AbortSignal) => ({
  tool: "charge_card",
  args: { customer: "ada", amount: 42 },
  runId: "run_1",
  ...(signal ? { signal } : {}),
});

describe("createTerminalApproval with readAnswer", () => {
  it("asks through the reader, not stdin: later interrupts, y approves, anything else refuses", async () => {
    const { output, asked, readAnswer, written } = recorder(["later", "y", "no"]);
    const { hook, close } = createTerminalApproval(output, { later: {}, readAnswer });
    const signal = new AbortController().signal;
    expect(await hook(call(signal))).toBe("interrupt");
    expect(await hook(call())).toBe(true);
    expect(await hook(call())).toEqual({ approved: false, reason: "refused at the terminal" });
    expect(asked[0]).toEqual({
      question: 'allow charge_card {"customer":"ada","amount":42}? [y/N/later] ',
      signal,
    });
    expect(asked).toHaveLength(3);
    // The reader writes the question; before each, a line says an answer is awaited.
    expect(written()).toBe("codeaction: waiting for your answer (y, n or later; Enter: n):\n".repeat(3));
    close();
  });

  it("asks again on an answer that is not y, yes, n, no or later; Enter is the default, n; the progress is held meanwhile", async () => {
    const { output, asked, readAnswer, written } = recorder(["maybe", "ok", "", "Y"]);
    const holds: string[] = [];
    const progress = { hold: () => holds.push("hold"), release: () => holds.push("release") };
    const { hook } = createTerminalApproval(output, { later: {}, readAnswer, progress });
    expect(await hook(call())).toEqual({ approved: false, reason: "refused at the terminal" });
    expect(asked).toHaveLength(3);
    expect(written()).toContain('codeaction: "maybe" is not an answer: type y, n or later (Enter: n)\n');
    expect(written()).toContain('codeaction: "ok" is not an answer');
    expect(await hook(call())).toBe(true);
    expect(holds).toEqual(["hold", "release", "hold", "release"]);
  });

  it("later unavailable: says why and asks again through the reader", async () => {
    const { output, asked, readAnswer, written } = recorder(["later", "y"]);
    const { hook } = createTerminalApproval(output, {
      later: { unavailable: "no secret: answer y or n" },
      readAnswer,
    });
    expect(await hook(call())).toBe(true);
    expect(asked).toHaveLength(2);
    expect(written()).toBe(
      "codeaction: waiting for your answer (y, n or later; Enter: n):\nno secret: answer y or n\n",
    );
  });
});
