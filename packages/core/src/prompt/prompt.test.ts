import { describe, expect, it } from "vitest";
import {
  buildCodeActionPrompt,
  buildRepairMessage,
  defaultSandboxDescription,
  describeNetwork,
} from "./prompt.ts";

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

describe("the prompt tells the model what network it may reach", () => {
  const promptFor = (networkRule: string, resultSchema?: string) =>
    buildCodeActionPrompt({
      conversation: [],
      question: "Latest release?",
      stubSignatures: "",
      sandboxDescription: defaultSandboxDescription,
      networkRule,
      ...(resultSchema ? { resultSchema } : {}),
    }).system;

  it("none, full, restricted and an allow-list each give their own rule", () => {
    expect(promptFor(describeNetwork("none"))).toContain("Do not use the network: the sandbox has none.");
    const full = promptFor(describeNetwork("full"));
    expect(full).toContain("The program may use the network");
    expect(full).not.toContain("Do not use the network");
    const allowed = promptFor(describeNetwork({ allow: ["api.example.org", "*.example.com"] }));
    expect(allowed).toContain(
      "may reach only these hosts, over HTTP or HTTPS on ports 80 and 443: api.example.org, *.example.com",
    );
    expect(allowed).toContain("HTTPS_PROXY");
    expect(allowed).not.toContain("Do not use the network");
    expect(promptFor(describeNetwork("restricted"))).toContain("pypi.org, files.pythonhosted.org");
  });

  it("with a result schema, rule 3 and the schema say what the RESULT must be", () => {
    const system = promptFor(describeNetwork("none"), '{"type":"object"}');
    expect(system).toContain("The answer must be JSON matching the JSON Schema below");
    expect(system).toContain('The JSON Schema of the answer:\n```json\n{"type":"object"}\n```');
    expect(promptFor(describeNetwork("none"))).not.toContain("JSON Schema");
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
    expect(
      buildRepairMessage({
        ...base,
        status: "invalid-result",
        invalidResult: "the answer does not match: total: expected number",
      }),
    ).toContain(
      "Reason: The program's RESULT was refused: the answer does not match: total: expected number.",
    );
  });
});
