import { request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpListener, listenHttp } from "./http-listener.ts";

const token = "a-test-token-of-enough-characters";
const authorization = `Bearer ${token}`;
let listener: HttpListener;
let created = 0;

function probeServer(): Server {
  created += 1;
  const server = new Server({ name: "probe", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: "probe", inputSchema: { type: "object" } }],
  }));
  return server;
}

beforeAll(async () => {
  listener = await listenHttp({ host: "127.0.0.1", port: 0, token, createServer: probeServer });
});
afterAll(async () => {
  await listener.close();
});

type Answer = { status: number | undefined; headers: Record<string, unknown>; body: string };

function post(url: string, headers: Record<string, string>, path = "/mcp"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(new URL(path, url), { method: "POST", headers }, (response) => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode, headers: response.headers, body }));
    });
    outgoing.on("error", reject);
    outgoing.end("{}");
  });
}

async function listToolsWith(url: string, headers: Record<string, string>): Promise<string[]> {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  try {
    return (await client.listTools()).tools.map((tool) => tool.name);
  } finally {
    await client.close();
  }
}

describe("listenHttp (Streamable HTTP, stateless, token, Host and Origin)", () => {
  it("serves the official SDK client sending the token at /mcp, one server per request", async () => {
    expect(listener.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const before = created;
    expect(await listToolsWith(listener.url, { Authorization: authorization })).toEqual(["probe"]);
    expect(created).toBeGreaterThan(before);
  });

  it("answers 401 with a Bearer challenge without the token or with a wrong one, before any server", async () => {
    const before = created;
    await expect(listToolsWith(listener.url, {})).rejects.toMatchObject({
      code: 401,
      message: expect.stringMatching(/unauthorized: send the server's token/),
    });
    const host = new URL(listener.url).host;
    const attempts: Record<string, string>[] = [
      { host },
      { host, authorization: `Bearer ${token}x` },
      { host, authorization: `Bearer ${token.slice(0, -1)}` },
      { host, authorization: token },
      { host, authorization: "Bearer " },
    ];
    for (const headers of attempts) {
      const answer = await post(listener.url, headers);
      expect(answer.status, JSON.stringify(headers)).toBe(401);
      expect(answer.headers["www-authenticate"]).toBe('Bearer realm="codeaction mcp"');
      expect(answer.body).toMatch(/Authorization: Bearer <token>/);
    }
    // Unauthenticated requests learn nothing of the paths either.
    expect((await post(listener.url, { host }, "/other")).status).toBe(401);
    expect((await post(listener.url, { host, authorization }, "/other")).status).toBe(404);
    expect(created).toBe(before);
  });

  it("refuses a Host or an Origin that is not loopback (DNS rebinding), token or not", async () => {
    const host = new URL(listener.url).host;
    expect((await post(listener.url, { host: "attacker.example", authorization })).status).toBe(403);
    expect(
      (await post(listener.url, { host, origin: "http://attacker.example", authorization })).status,
    ).toBe(403);
    expect((await post(listener.url, { host, origin: "null", authorization })).status).toBe(403);
    expect(
      (await post(listener.url, { host: `localhost:${new URL(listener.url).port}`, authorization })).status,
    ).not.toBe(403);
  });

  it("on 127.0.0.2 checks Host and Origin against that address and the localhost names", async () => {
    const other = await listenHttp({ host: "127.0.0.2", port: 0, token, createServer: probeServer });
    try {
      const host = new URL(other.url).host;
      expect(host).toMatch(/^127\.0\.0\.2:\d+$/);
      const rebind = {
        host: "rebind.example.invalid",
        origin: "http://rebind.example.invalid",
        authorization,
      };
      const refused = await post(other.url, rebind);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatch(/Host header/);
      expect(
        (await post(other.url, { host, origin: "http://rebind.example.invalid", authorization })).status,
      ).toBe(403);
      expect(await listToolsWith(other.url, { Authorization: authorization })).toEqual(["probe"]);
    } finally {
      await other.close();
    }
  });
});
