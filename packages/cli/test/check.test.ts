import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { everythingServer, filesystemServer, memoryServer } from "./reference-servers.ts";
import { repositoryRoot } from "./run-cli.ts";
import { runMain } from "./run-main.ts";

// `codeaction check` as a tool author runs it: the CLI (main(), in this process) against the reference MCP
// servers from npm, and a fixture server that gets each check wrong. No container starts.

vi.setConfig({ testTimeout: 120_000 });

type Report = {
  tools: {
    server: string;
    tool: string;
    function: string;
    verdict: string;
    findings: { check: string; severity: string; message: string; fix?: string }[];
    calls: { kind: string; arguments: unknown; outcome: string; preview: string }[];
  }[];
};

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-check-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const reportOf = (stdout: string) => JSON.parse(stdout) as Report;
const toolIn = (report: Report, name: string) => report.tools.find((tool) => tool.tool === name)!;

describe("codeaction check --server CMD", () => {
  it("server-everything with --call: a table with a verdict per tool, example calls and the error a program would read", async () => {
    const run = await runMain(["check", "--server", everythingServer, "--call"]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^13 tools: 1 ready, 12 needs work, 0 broken\n\nTOOL +PYTHON +VERDICT +FINDINGS\n/,
    );
    expect(run.stdout).toMatch(/\nget-structured-content +get_structured_content +ready +-\n/);
    expect(run.stdout).toMatch(/\necho +echo +needs work +outputSchema\n/);
    expect(run.stdout).toMatch(
      /\nget-resource-reference +get_resource_reference +needs work +outputSchema, descriptions\n/,
    );
    // Called with the first enum value of its required argument: the structured result validates.
    expect(run.stdout).toMatch(
      /called \(example\) \{"location":"New York"\} -> ok: \{"temperature":\d+,"conditions":"[^"]+","humidity":\d+\}/,
    );
    expect(run.stdout).toMatch(
      /called \(bad-arguments\) \{"location":12345\} -> error-result: .*Input validation error/,
    );
    // A tool without example arguments is not called on a guess.
    expect(run.stdout).toMatch(
      /echo \(needs work\)\n(.*\n)*? {2}· call: not called: the schema gives no example arguments/,
    );
  });

  it("server-memory --json, with --args for one tool: its structuredContent validates against its outputSchema", async () => {
    const run = await runMain([
      "check",
      "--server",
      memoryServer(join(folder, "memory.jsonl")),
      "--args",
      'search_nodes={"query":"Ada"}',
      "--json",
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    const report = reportOf(run.stdout);
    expect(report.tools.map((tool) => tool.tool)).toContain("read_graph");
    const search = toolIn(report, "search_nodes");
    expect(search).toMatchObject({ server: "index", function: "search_nodes", verdict: "ready" });
    expect(search.calls).toEqual([
      {
        kind: "example",
        arguments: { query: "Ada" },
        outcome: "ok",
        preview: '{"entities":[],"relations":[]}',
      },
      expect.objectContaining({
        kind: "bad-arguments",
        arguments: { query: 12345 },
        outcome: "error-result",
      }),
    ]);
  });

  it("server-filesystem --json: every tool declares an outputSchema; the untyped ones are named", async () => {
    const run = await runMain(["check", "--server", filesystemServer(folder), "--json"]);
    expect(run.exitCode, run.stderr).toBe(0);
    const report = reportOf(run.stdout);
    expect(report.tools.length).toBeGreaterThan(10);
    for (const tool of report.tools) {
      expect(tool.findings.map((finding) => finding.check)).not.toContain("outputSchema");
      expect(tool.calls).toEqual([]);
    }
    expect(toolIn(report, "write_file").findings).toContainEqual(
      expect.objectContaining({
        check: "descriptions",
        message: "arguments without a description: path, content",
      }),
    );
  });

  it("finds each problem of a server that gets them wrong, with a fix, and exits 1 when a tool is broken", async () => {
    const server = `node ${join(repositoryRoot, "packages/cli/test/fixtures/unready-server.ts")}`;
    const run = await runMain(["check", "--server", server, "--call", "--json"]);
    expect(run.exitCode).toBe(1);
    const report = reportOf(run.stdout);
    expect(report.tools.map((tool) => [tool.tool, tool.function, tool.verdict])).toEqual([
      ["count_items", "count_items", "broken"],
      ["print", "print_", "needs work"],
      ["get-user", "get_user", "needs work"],
      ["get_user", "get_user_2", "needs work"],
    ]);
    const findings = (name: string) =>
      toolIn(report, name).findings.map((finding) => [finding.check, finding.message]);
    expect(findings("count_items")).toEqual([
      [
        "structuredContent",
        "Structured content does not match the tool's output schema: data/count must be integer",
      ],
      ["errors", 'a wrongly typed argument was accepted ({"box":12345})'],
    ]);
    expect(findings("print")).toEqual([
      ["types", "the stub says Any for label: the schema does not say what goes there"],
      ["name", "programs call it print_: print is a Python keyword or builtin name"],
      ["call", "not called: the schema gives no example arguments"],
    ]);
    expect(findings("get-user")).toEqual([
      ["outputSchema", expect.stringMatching(/^no outputSchema: a program cannot know what comes back/)],
      ["descriptions", "the tool has no description: its docstring is empty"],
      ["descriptions", "argument without a description: id"],
      ["call", "not called: the schema gives no example arguments"],
    ]);
    expect(findings("get_user")).toEqual([
      ["name", "programs call it get_user_2: its Python name clashes with another tool's"],
      ["errors", "the error result has no text: programs see an empty ToolError"],
    ]);
    for (const tool of report.tools) {
      for (const finding of tool.findings) {
        if (finding.severity !== "note") expect(finding.fix, finding.message).toBeTruthy();
      }
    }
  });

  it("usage: --server is required and --args must name a tool with a JSON object", async () => {
    const missing = await runMain(["check"]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/give the server to check: --server "CMD"/);
    const notJson = await runMain(["check", "--server", everythingServer, "--args", "get-sum=1,2"]);
    expect(notJson.exitCode).toBe(2);
    expect(notJson.stderr).toMatch(
      /--args must be TOOL=\{\.\.\.\} with a JSON object of arguments, got "get-sum=1,2"/,
    );
  });
});
