/**
 * Builds a code-action agent in a process of its own (so its environment, such as DOCKER_HOST, is
 * its own) and prints one JSON line: how long the build took and how it failed.
 * Usage: node tests/support/build-agent-child.ts '<sandbox settings as JSON>'
 */
import { buildAgent } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";

const sandbox = JSON.parse(process.argv[2] ?? "{}") as Record<string, unknown>;
const started = performance.now();
try {
  const agent = await buildAgent({ model: new ScriptedChatModel([]), pattern: "code-action", sandbox });
  await agent.close();
  console.log(JSON.stringify({ built: true, milliseconds: performance.now() - started }));
} catch (error) {
  const failure = error as Error & { code?: string };
  console.log(
    JSON.stringify({
      built: false,
      milliseconds: performance.now() - started,
      name: failure.name,
      code: failure.code,
      message: failure.message,
    }),
  );
}
process.exit(0);
