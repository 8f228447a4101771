// Shell mode: a sandbox without code-action. The agent keeps its tool-calling loop and gets five tools
// over one long-lived container (sandbox_exec, sandbox_read_file, sandbox_write_file,
// sandbox_list_files, sandbox_install_package). Run: node examples/shell-agent.ts
import { buildAgent } from "@codeaction/core";
import { exampleModel } from "./model.ts";

const question =
  "Write a Python script /workspace/scripts/fib.py that prints the first 20 Fibonacci numbers on one line, " +
  "run it with its output saved to /workspace/fib.txt, then read that file and tell me the 20th number.";

const agent = await buildAgent({
  model: await exampleModel("shell-agent"),
  sandbox: { network: "none" },
  traceTools: true, // prints each tool call and a shortened result on stderr
});
try {
  const result = await agent.invoke({ messages: [{ role: "user", content: question }] });
  console.log(">>>", result.messages.at(-1)?.content);
} finally {
  await agent.close(); // removes the container
}
