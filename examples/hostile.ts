// The seed's escape test: a program that looks for your files and secrets, tries to plant a file
// and tries two ways out, run in a sandbox with the code-action settings. No model: the program is
// examples/hostile.py, the one the sandbox's own tests run.
// Run: node examples/hostile.ts   (set OPENAI_API_KEY in this shell to see that it stays outside)
import { readFile } from "node:fs/promises";
import { SandboxManager } from "@codeaction/sandbox";

const program = await readFile(new URL("./hostile.py", import.meta.url), "utf8");

const manager = new SandboxManager({ network: "none" });
try {
  const session = await manager.createSession();
  // The program goes in through the environment, the folder it looks for (this checkout) as an argument.
  const result = await session.execute(`python3 -c "$PROGRAM" "$HOST_FOLDER"`, {
    env: { PROGRAM: program, HOST_FOLDER: process.cwd() },
  });
  console.log(result.stdout + result.stderr);
} finally {
  await manager.close();
}
