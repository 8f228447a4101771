import { describe, expect, it } from "vitest";
import { buildAgent } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { programReply } from "./helpers.ts";

// codeAction.preimport: the program's interpreter (started ahead of the program) imports the
// modules while it waits, so the program finds them loaded; observed from inside the program.

const ask = { messages: [{ role: "user" as const, content: "Which modules are loaded?" }] };
const loadedCheck = 'import sys\nprint("RESULT:", "fractions" in sys.modules)';

async function answerOf(
  program: string,
  codeAction: { preimport?: string[] },
  sandbox: { pool?: number } = {},
): Promise<string | undefined> {
  const agent = await buildAgent({
    model: new ScriptedChatModel([programReply(program)]),
    pattern: "code-action",
    codeAction,
    sandbox,
  });
  try {
    return (await agent.invoke(ask)).answer;
  } finally {
    await agent.close();
  }
}

describe("codeAction.preimport (real engine)", () => {
  it("loads the modules before the program runs (the warm relay's interpreter and a cold one); without it they are not", async () => {
    // Warm by default: the pool's relay was started with the list.
    expect(await answerOf(loadedCheck, { preimport: ["fractions"] })).toBe("True");
    // No pool: the turn starts the relay itself, with the list.
    expect(await answerOf(loadedCheck, { preimport: ["fractions"] }, { pool: 0 })).toBe("True");
    expect(await answerOf(loadedCheck, {})).toBe("False");
  });

  it("a module that cannot be imported leaves the interpreter running: the program's own import reports it, the next module is still loaded", async () => {
    const program = [
      "import sys",
      'loaded = "fractions" in sys.modules',
      "try:",
      "    import no_such_module_codeaction",
      "except ModuleNotFoundError as error:",
      '    print("RESULT:", error.name, loaded)',
    ].join("\n");
    expect(await answerOf(program, { preimport: ["no_such_module_codeaction", "fractions"] })).toBe(
      "no_such_module_codeaction True",
    );
  });

  it("refuses what is not a module name, before Docker is touched", async () => {
    const build = buildAgent({
      model: new ScriptedChatModel([]),
      pattern: "code-action",
      codeAction: { preimport: ["pandas; import os"] },
    });
    await expect(build).rejects.toThrow(/a Python module name/);
  });
});
