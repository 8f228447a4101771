import { readFileSync } from "node:fs";
import { access, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_ERROR_MESSAGE, FIXTURE_PNG_BASE64 } from "../../test/fixtures/mcp-fixture-tools.ts";
import { type HttpFixtureServer, startHttpFixtureServer } from "../../test/fixtures/mcp-http-server.ts";
import { isRunning } from "../../test/helpers.ts";
import { McpServerError } from "../errors/mcp-server-error.ts";
import { McpToolError } from "../errors/mcp-tool-error.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { type ConnectedServers, connectServers, type ServerSpec } from "./connect.ts";

const stdioFixture = fileURLToPath(new URL("../../test/fixtures/mcp-stdio-server.ts", import.meta.url));
const context = { runId: "test-run" };

function stdioServer(options: { tools?: string[] } = {}): ServerSpec {
  return {
    command: process.execPath,
    args: [stdioFixture, ...(options.tools ? [`--tools=${options.tools.join(",")}`] : [])],
  };
}

function tool(connected: ConnectedServers, name: string): ToolSpec {
  const found = connected.tools.find((candidate) => candidate.name === name);
  if (!found)
    throw new Error(`no tool ${name} in ${connected.tools.map((candidate) => candidate.name).join(", ")}`);
  return found;
}

const opened: ConnectedServers[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((connected) => connected.close()));
});

async function connect(...parameters: Parameters<typeof connectServers>): Promise<ConnectedServers> {
  const connected = await connectServers(...parameters);
  opened.push(connected);
  return connected;
}

/**
 * The same checks for a server however it is reached. The checks only read and call stateless
 * tools, so they share one connection (one server process for stdio) instead of one each.
 */
function describeFixtureTools(transportName: string, spec: () => ServerSpec) {
  describe(`the fixture tools over ${transportName}`, () => {
    let shared: ConnectedServers;
    beforeAll(async () => {
      shared = await connectServers({ shop: spec() });
    });
    afterAll(async () => {
      await shared?.close();
    });

    it("lists every tool with its schemas, description and origin", async () => {
      const connected = shared;
      expect(connected.tools.map((candidate) => candidate.name).sort()).toEqual(
        [
          "check_inventory",
          "get-user",
          "greet",
          "list_tags",
          "logo",
          "lookup_order",
          "report",
          "server_info",
        ].sort(),
      );
      const lookup = tool(connected, "lookup_order");
      expect(lookup.origin).toBe("mcp:shop");
      expect(lookup.description).toBe("Look up one order by its id. Returns the order with its line items.");
      expect(lookup.inputSchema).toMatchObject({
        type: "object",
        properties: { orderId: { type: "string", description: "The order id, like 'A-1001'." } },
        required: ["orderId"],
      });
      expect(lookup.outputSchema).toMatchObject({
        type: "object",
        properties: { total: { type: "number", description: "Order total in EUR." } },
      });
      expect(tool(connected, "greet").outputSchema).toBeUndefined();
      expect(lookup.inputSchema).not.toHaveProperty("$schema");
      expect(tool(connected, "get-user").inputSchema).toMatchObject({
        properties: { id: { default: 1 }, fields: { default: ["name"] }, verbose: { default: false } },
      });
      expect(tool(connected, "get-user").inputSchema.required).toBeUndefined();
    });

    it("maps each kind of result, keeping its structure", async () => {
      const connected = shared;
      expect(await tool(connected, "lookup_order").invoke({ orderId: "A-1001" }, context)).toEqual({
        orderId: "A-1001",
        region: "EMEA",
        total: 1234.5,
        items: [
          { sku: "KB-01", quantity: 2 },
          { sku: "MS-07", quantity: 1 },
        ],
      });
      expect(await tool(connected, "greet").invoke({ name: "Ada" }, context)).toBe("Hello, Ada!");
      expect(await tool(connected, "get-user").invoke({}, context)).toEqual({
        id: 1,
        fields: ["name"],
        verbose: false,
        name: "user-1",
      });
      expect(await tool(connected, "get-user").invoke({ id: 7, verbose: true }, context)).toMatchObject({
        id: 7,
        verbose: true,
      });
      expect(await tool(connected, "list_tags").invoke({}, context)).toEqual(["sale", "new"]);
      const image = { type: "image", mimeType: "image/png", data: FIXTURE_PNG_BASE64 };
      expect(await tool(connected, "logo").invoke({}, context)).toEqual(image);
      expect(await tool(connected, "report").invoke({}, context)).toEqual([
        "Q3 report",
        image,
        {
          type: "resource",
          uri: "file:///reports/q3.csv",
          mimeType: "text/csv",
          text: "region,total\nEMEA,10\n",
        },
        {
          type: "resource",
          uri: "file:///reports/q3.bin",
          mimeType: "application/octet-stream",
          blob: "AAEC",
        },
      ]);
    });

    it("throws the server's own message for an isError result", async () => {
      const connected = shared;
      const error = await tool(connected, "check_inventory")
        .invoke({ sku: "KB-01" }, context)
        .catch((caught: unknown) => caught);
      expect(McpToolError.isInstance(error)).toBe(true);
      expect((error as McpToolError).message).toBe(FIXTURE_ERROR_MESSAGE);
      expect((error as McpToolError).isErrorResult).toBe(true);
    });

    it("passes the server's validation message on for bad arguments", async () => {
      const connected = shared;
      await expect(tool(connected, "greet").invoke({ name: 42 }, context)).rejects.toThrow(/name/);
    });
  });
}

describeFixtureTools("stdio", () => stdioServer());

let httpFixture: HttpFixtureServer;
beforeAll(async () => {
  httpFixture = await startHttpFixtureServer({ bearerToken: "fixture-token" });
});
afterAll(async () => {
  await httpFixture.close();
});
describeFixtureTools("Streamable HTTP", () => ({
  url: httpFixture.url,
  headers: { Authorization: "Bearer fixture-token" },
}));

describe("stdio servers", () => {
  it("runs the command with the given env (over a safe default, not this process's) and cwd", async () => {
    const directory = await mkdtemp(join(tmpdir(), "mcp-cwd-"));
    process.env.CODEACTION_FIXTURE_SECRET = "do-not-leak";
    try {
      const connected = await connect({
        shop: { ...stdioServer({ tools: ["server_info"] }), env: { FIXTURE_LABEL: "blue" }, cwd: directory },
      });
      expect(await tool(connected, "server_info").invoke({}, context)).toMatchObject({
        cwd: directory,
        label: "blue",
        inheritedSecret: false,
      });
    } finally {
      delete process.env.CODEACTION_FIXTURE_SECRET;
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("close() ends the server process", async () => {
    const connected = await connectServers({ shop: stdioServer({ tools: ["server_info"] }) });
    const { pid } = (await tool(connected, "server_info").invoke({}, context)) as { pid: number };
    expect(isRunning(pid)).toBe(true);
    await connected.close();
    expect(isRunning(pid)).toBe(false);
    await expect(tool(connected, "server_info").invoke({}, context)).rejects.toThrow(
      /MCP server 'shop' could not run tool 'server_info'/,
    );
  });

  it("close() also ends what the server started (its whole process group)", async () => {
    // A wrapper shell starts the fixture and a helper that ignores stdin, then waits for both.
    const directory = await mkdtemp(join(tmpdir(), "mcp-group-"));
    const pidFile = join(directory, "helper.pid");
    const script = `exec 3<&0; '${process.execPath}' '${stdioFixture}' --tools=server_info <&3 & sleep 300 & echo $! > '${pidFile}'; wait`;
    try {
      const connected = await connectServers({ shop: { command: "sh", args: ["-c", script] } });
      const { pid } = (await tool(connected, "server_info").invoke({}, context)) as { pid: number };
      const helperPid = Number(readFileSync(pidFile, "utf8"));
      expect(isRunning(pid) && isRunning(helperPid)).toBe(true);
      await connected.close();
      expect(isRunning(pid)).toBe(false);
      expect(isRunning(helperPid)).toBe(false);
      await expect(tool(connected, "server_info").invoke({}, context)).rejects.toThrow("could not run tool");
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("a command that exits at once fails with its name and stderr, and leaves no process", async () => {
    // The failing command also starts a long sleep that would outlive it without a group kill.
    const script = `sleep 300 & echo "helper $!" >&2; echo "boom: missing config" >&2; exit 3`;
    const error = await connectServers({
      good: stdioServer({ tools: ["server_info"] }),
      broken: { command: "sh", args: ["-c", script] },
    }).catch((caught: unknown) => caught);
    expect(McpServerError.isInstance(error)).toBe(true);
    const serverError = error as McpServerError;
    expect(serverError.serverName).toBe("broken");
    expect(serverError.message).toMatch(
      /^MCP server 'broken' \(sh -c .*\) failed to start: the process exited with code 3/,
    );
    expect(serverError.message).toContain("boom: missing config");
    expect(serverError.stderrTail).toContain("boom: missing config");
    const helperPid = Number(/helper (\d+)/.exec(serverError.stderrTail)?.[1]);
    expect(helperPid).toBeGreaterThan(0);
    expect(isRunning(helperPid)).toBe(false);
  });

  it("closes the servers already open when another fails", async () => {
    const before = childPidsOfThisProcess();
    await expect(
      connectServers({
        good: stdioServer({ tools: ["server_info"] }),
        broken: {
          command: process.execPath,
          args: ["-e", "console.error('boom: missing config'); process.exit(3)"],
        },
      }),
    ).rejects.toThrow(/MCP server 'broken'.*exited with code 3[\s\S]*boom: missing config/);
    expect(childPidsOfThisProcess().filter((pid) => !before.includes(pid) && isRunning(pid))).toEqual([]);
  });

  it("a command that does not exist fails with its name and the cause", async () => {
    await expect(connectServers({ ghost: { command: "codeaction-no-such-command" } })).rejects.toThrow(
      "MCP server 'ghost' (codeaction-no-such-command) failed to start: the command could not be started (ENOENT",
    );
  });

  it("a server that never answers fails after connectTimeoutMs and is ended", async () => {
    const script = `echo "helper $$" >&2; trap '' TERM; while true; do sleep 1; done`;
    const error = (await connectServers({
      mute: { command: "sh", args: ["-c", script], connectTimeoutMs: 300 },
    }).catch((caught: unknown) => caught)) as McpServerError;
    expect(error.message).toMatch(
      /MCP server 'mute' .* did not answer initialize and tools\/list within 300 ms/,
    );
    const pid = Number(/helper (\d+)/.exec(error.stderrTail)?.[1]);
    expect(isRunning(pid)).toBe(false);
  });
});

describe("call timeouts", () => {
  it("a tool that does not answer within callTimeoutMs fails with the server, the tool and the fix", async () => {
    const connected = await connect({
      slow: { ...stdioServer({ tools: ["wait"] }), callTimeoutMs: 300 },
    });
    const wait = tool(connected, "wait");
    expect(await wait.invoke({ ms: 10 }, context)).toBe("waited 10 ms");
    const error = (await wait
      .invoke({ ms: 5000 }, context)
      .catch((caught: unknown) => caught)) as McpToolError;
    expect(McpToolError.isInstance(error)).toBe(true);
    expect(error.message).toBe(
      "MCP server 'slow' did not answer tool 'wait' within 300 ms; raise callTimeoutMs in the server's spec if the tool needs longer",
    );
    // The server is still usable after a call it was too slow for.
    expect(await wait.invoke({ ms: 0 }, context)).toBe("waited 0 ms");
  });
});

describe("Streamable HTTP servers", () => {
  it("sends the configured headers", async () => {
    const before = httpFixture.receivedHeaders.length;
    await connect({
      shop: { url: httpFixture.url, headers: { Authorization: "Bearer fixture-token", "X-Team": "blue" } },
    });
    const sent = httpFixture.receivedHeaders.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((headers) => headers["x-team"] === "blue")).toBe(true);
  });

  it("a refused request fails with the server's name and the HTTP status", async () => {
    await expect(connectServers({ shop: { url: httpFixture.url } })).rejects.toThrow(
      /MCP server 'shop' \(http:\/\/127\.0\.0\.1:\d+\/mcp\) failed to start: .*401/,
    );
  });

  it("a closed port fails with the server's name and the connection error", async () => {
    const port = await closedPort();
    await expect(connectServers({ gone: { url: `http://127.0.0.1:${port}/mcp` } })).rejects.toThrow(
      /MCP server 'gone' .* failed to start: fetch failed.*ECONNREFUSED/,
    );
  });

  it("a spec with neither a command nor a url fails with the server's name, before any server starts", async () => {
    const started = join(await mkdtemp(join(tmpdir(), "mcp-spec-")), "started");
    await expect(
      connectServers({
        first: { command: "sh", args: ["-c", `touch ${started}`] },
        empty: {} as ServerSpec,
      }),
    ).rejects.toThrow("MCP server 'empty' needs either a command (stdio");
    await expect(access(started)).rejects.toThrow("ENOENT");
  });

  it("a URL that is not one fails with the server's name", async () => {
    await expect(connectServers({ typo: { url: "127.0.0.1:3000/mcp" } })).rejects.toThrow(
      "MCP server 'typo': '127.0.0.1:3000/mcp' is not a valid URL",
    );
  });
});

describe("tool names", () => {
  it("keep their own name, and become <server>_<tool> only on a clash", async () => {
    const connected = await connect(
      {
        alpha: stdioServer({ tools: ["greet", "report", "logo"] }),
        beta: stdioServer({ tools: ["greet", "list_tags"] }),
      },
      { existingToolNames: ["report"] },
    );
    expect(connected.tools.map((candidate) => [candidate.name, candidate.origin])).toEqual([
      ["alpha_greet", "mcp:alpha"],
      ["logo", "mcp:alpha"],
      ["alpha_report", "mcp:alpha"],
      ["beta_greet", "mcp:beta"],
      ["list_tags", "mcp:beta"],
    ]);
    // A renamed tool still calls the server's own tool.
    expect(await tool(connected, "beta_greet").invoke({ name: "Bo" }, context)).toBe("Hello, Bo!");
  });
});

function childPidsOfThisProcess(): number[] {
  try {
    return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}
