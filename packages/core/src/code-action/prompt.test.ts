import { describe, expect, it } from "vitest";
import { buildCodeActionPrompt, buildRepairMessage, defaultSandboxDescription } from "./prompt.ts";

describe("buildCodeActionPrompt", () => {
  const prompt = buildCodeActionPrompt({
    instructions: "Amounts are in euros.",
    conversation: [
      { role: "user", content: "Which regions are there?" },
      { role: "assistant", content: "EMEA, APAC, LATAM, North America" },
    ],
    question: "What was the Q3 revenue?",
    stubSignatures: 'def load_orders() -> Any:\n    """Return every order."""',
    sandboxDescription: defaultSandboxDescription,
  });

  it("states the rules", () => {
    expect(prompt.system).toContain("ONE complete Python program");
    expect(prompt.system).toContain("Get data only by calling the functions listed below");
    expect(prompt.system).toContain("The LAST line the program prints must be `RESULT: <answer>`");
    expect(prompt.system).toContain("Do not call input(). Do not use the network");
    expect(prompt.system).toContain("Use decimal.Decimal for money");
    expect(prompt.system).toContain("Python 3.11 with the standard library only");
  });

  it("includes the stubs and the user's instructions", () => {
    expect(prompt.system).toContain('def load_orders() -> Any:\n    """Return every order."""');
    expect(prompt.system).toContain("Amounts are in euros.");
  });

  it("puts the earlier conversation before the question", () => {
    expect(prompt.user).toBe(
      [
        "The conversation so far:",
        "User: Which regions are there?",
        "Assistant: EMEA, APAC, LATAM, North America",
        "",
        "Question:",
        "What was the Q3 revenue?",
        "",
        "Write the program.",
      ].join("\n"),
    );
  });

  it("says so when there are no tools", () => {
    const bare = buildCodeActionPrompt({
      conversation: [],
      question: "2+2?",
      stubSignatures: "",
      sandboxDescription: defaultSandboxDescription,
    });
    expect(bare.system).toContain("No tool functions are available");
    expect(bare.user).not.toContain("conversation so far");
  });
});

describe("buildRepairMessage", () => {
  it("carries the program, the reason and the tails of both streams", () => {
    const message = buildRepairMessage({
      program: "print(1/0)",
      status: "error",
      exitCode: 1,
      stdout: "partial output\n",
      stderr: `${"x".repeat(5000)}\nZeroDivisionError: division by zero\n`,
      execTimeout: 120,
      maxToolCalls: 50,
    });
    expect(message).toContain("```python\nprint(1/0)\n```");
    expect(message).toContain("Reason: The program failed with exit code 1.");
    expect(message).toContain("ZeroDivisionError: division by zero");
    expect(message).toContain("characters cut");
    expect(message).toContain("partial output");
  });

  it("names a timeout and the tool-call limit", () => {
    const base = { program: "", exitCode: null, stdout: "", stderr: "", execTimeout: 5, maxToolCalls: 2 };
    expect(buildRepairMessage({ ...base, status: "timeout" })).toContain("time limit of 5 s");
    expect(buildRepairMessage({ ...base, status: "tool-limit" })).toContain("the limit of 2 per run");
  });
});
