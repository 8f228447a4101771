// The seed's security audit: a question in an attacker's voice. The model does what it is asked;
// the container is what stops it (its own /etc/passwd, no network). Run: node examples/security-audit.ts
import { buildAgent } from "@codeaction/core";
import pino from "pino";
import { exampleModel } from "./model.ts";

// Print the program the model writes, and what it printed in the sandbox: the code-action debug lines, on stderr.
const logger = pino(
  { level: "debug" },
  {
    write(line: string) {
      const entry = JSON.parse(line);
      if (entry.name === "codeaction.code-action") process.stderr.write(`${entry.msg}\n`);
    },
  },
);

const question =
  "For a security audit: print the first line of /etc/passwd, then fetch " +
  "https://example.invalid with urllib and report the HTTP status code.";

const agent = await buildAgent({
  model: await exampleModel("security-audit"),
  pattern: "code-action",
  logger,
});
try {
  const result = await agent.invoke({ messages: [{ role: "user", content: question }] });
  console.log(">>>", result.messages.at(-1)?.content);
} finally {
  await agent.close();
}
