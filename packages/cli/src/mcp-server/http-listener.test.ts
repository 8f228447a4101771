import { request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpListener, listenHttp } from "./http-listener.ts";

let listener: HttpListener;
let created = 0;
beforeAll(async () => {
  listener = await listenHttp({
    host: "127.0.0.1",
    port: 0,
    createServer: () => {
      created += 1;
      const server = new Server({ name: "probe", version: "1.0.0" }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [{ name: "probe", inputSchema: { type: "object" } }],
      }));
      return server;
    },
  });
});
afterAll(async () => {
  await listener.close();
});

function post(headers: Record<string, string>, path = "/mcp"): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, listener.url);
    const outgoing = request(url, { method: "POST", headers }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    outgoing.on("error", reject);
    outgoing.end("{}");
  });
}

describe("listenHttp (Streamable HTTP, stateless, loopback)", () => {
  it("serves the official SDK client at /mcp on 127.0.0.1, one server per request", async () => {
    expect(listener.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(listener.url)));
    const before = created;
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["probe"]);
    expect(created).toBe(before + 1);
    await client.close();
  });

  it("refuses a Host or an Origin that is not loopback (DNS rebinding), and other paths", async () => {
    expect(await post({ host: "attacker.example" })).toBe(403);
    expect(await post({ host: new URL(listener.url).host, origin: "http://attacker.example" })).toBe(403);
    expect(await post({ host: new URL(listener.url).host }, "/other")).toBe(404);
  });
});
