// Cancelling a turn when the HTTP client goes away: the handler gives the turn an AbortSignal that
// fires when the response closes before it ended. The program is stopped, its container removed,
// and the stream throws an AbortError. Run: node examples/langchain/cancel-on-disconnect.ts
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { AbortError, buildAgent } from "@codeaction/core";
import { exampleModel } from "../model.ts";

const agent = await buildAgent({
  model: await exampleModel("langchain-cancel"),
  pattern: "code-action",
  sandbox: { pool: 0 },
});

let handled: (outcome: string) => void = () => undefined;
const outcome = new Promise<string>((resolve) => {
  handled = resolve;
});

// The server: streams the turn's steps as JSON lines, and cancels the turn if the client leaves.
const server = createServer(async (_request, response) => {
  const controller = new AbortController();
  response.on("close", () => {
    if (!response.writableFinished) controller.abort(new Error("the client disconnected"));
  });
  response.writeHead(200, { "content-type": "application/x-ndjson" });
  try {
    const steps = await agent.stream("Wait ten minutes, then say done.", { signal: controller.signal });
    for await (const step of steps) response.write(`${JSON.stringify({ step: step.type })}\n`);
    response.end();
    handled("answered");
  } catch (error) {
    if (!AbortError.isInstance(error)) throw error;
    handled(`cancelled ${error.runId}: ${error.message}`);
  }
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const { port } = server.address() as AddressInfo;

// The client: reads until the program starts, then disconnects.
const client = request({ host: "127.0.0.1", port, path: "/ask" }, (response) => {
  response.setEncoding("utf8").on("data", (line: string) => {
    process.stdout.write(`client got ${line}`);
    if (line.includes("program-start")) {
      console.log("client disconnects");
      client.destroy();
    }
  });
});
client.on("error", () => undefined);
client.end();

try {
  console.log(`server: ${await outcome}`);
} finally {
  server.close();
  await agent.close();
}
