import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { everythingServer } from "./reference-servers.ts";
import { repositoryRoot, runCli } from "./run-cli.ts";
import { runMain } from "./run-main.ts";

// The command line as a user meets it, without Docker: usage errors, missing inputs, the tools
// pattern over a replayed model, the journal, the stubs, and doctor without an engine.

// Each case starts Node and loads LangChain: allow for a busy machine.
vi.setConfig({ testTimeout: 120_000 });

const orders = join(repositoryRoot, "examples/data/orders.csv");
const question = "What was the revenue per region in Q3 2026 (July to September)?";
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-cli-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function replayFile(name: string, replies: unknown[]): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, JSON.stringify({ replies }));
  return path;
}

function expectNoStackTrace(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at /m);
}

describe("usage errors exit 2 with one line", () => {
  it.each([
    [["ask", "--bogus", question], /unknown option --bogus for `codeaction ask`/],
    [["ask"], /give the question/],
    [["ask", "--pattern", "chain", question], /--pattern must be "code-action" or "tools", got "chain"/],
    [["ask", "--image", "x", "--data", question], /--image and --data cannot be combined/],
    [
      ["ask", "--journal", "a.jsonl", "--no-journal", question],
      /--journal and --no-journal cannot be combined/,
    ],
    [
      ["ask", "--server", "node 'unclosed", "--replay", "x.json", question],
      /--server: .*quote is not closed/,
    ],
    [["frobnicate"], /unknown command "frobnicate"/],
    [["image", "push"], /unknown command `codeaction image push`/],
    [["sandbox", "run"], /give the Python file to run/],
    [["sandbox", "run", "x.py", "--network", "some"], /--network must be "none" or "full"/],
    [["sandbox", "run", "x.py", "--memory", "lots"], /--memory must be a size/],
    [["sandbox", "run", "x.py", "--timeout", "0"], /--timeout must be a number from 1/],
    [["sandbox", "run", "x.py", "--gvisor", "--network", "full"], /--gvisor runs with --network none only/],
    [["run"], /give the Python file to run/],
    [["run", "x.py", "--approve"], /--approve asks on a terminal, and stdin is not one/],
    [["run", "x.py", "--max-tool-calls", "1.5"], /--max-tool-calls must be a whole number/],
    [["mcp"], /give the tools to serve: --server "CMD", --csv FILE or --file FILE/],
    [["mcp", "--csv", "x.csv", "--host", "0.0.0.0"], /--host goes with --http PORT/],
    [["mcp", "--csv", "x.csv", "--http", "70000"], /--http must be a number from 0 to 65535/],
    [["mcp", "--csv", "x.csv", "--token-file", "t"], /--token-file goes with --http PORT/],
    [
      ["mcp", "--csv", "x.csv", "--http", "0", "--token-file", "missing.token"],
      // Read from the command's folder, and named as it was looked for there.
      /--token-file "\/.+\/missing\.token" could not be read \(ENOENT\)/,
    ],
  ])("codeaction %j (in process, through main())", async (args, message) => {
    const run = await runMain(args, { cwd: folder });
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expectNoStackTrace(run.stderr);
  });

  it("as a process too: the bin exits 2 with the one line", async () => {
    const run = await runCli(["frobnicate"], { cwd: folder });
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^codeaction: unknown command "frobnicate"/);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("prints the help on --help and exits 0", async () => {
    const run = await runMain(["ask", "--help"]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain("--show-program");
    expect(run.stdout).toContain("--no-journal");
  });

  it("mcp --help shows a Claude Desktop entry that runs the command through npx, no global install needed", async () => {
    const run = await runMain(["mcp", "--help"]);
    expect(run.exitCode).toBe(0);
    const entry = run.stdout.slice(run.stdout.indexOf('{ "mcpServers"')).replace(/\s+/g, " ");
    const config = JSON.parse(entry) as { mcpServers: Record<string, { command: string; args: string[] }> };
    expect(config.mcpServers["memory-code"]).toMatchObject({
      command: "npx",
      args: ["-y", "@codeaction/cli", "mcp", "--server", "npx -y @modelcontextprotocol/server-memory"],
    });
  });
});

describe("ask without a model", () => {
  it("says what to set when there is neither OPENAI_API_KEY nor --replay", async () => {
    const run = await runMain(["ask", "--csv", orders, question], { cwd: folder });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^codeaction: No model to ask: set OPENAI_API_KEY .* or pass --replay FILE/);
    // It names the recording shipped inside the package, never the repository's examples/.
    expect(run.stderr).not.toContain("examples/replays");
    const shipped = /--replay (\S+) "What is the sum of the squares of 1 to 10\?"/.exec(run.stderr)?.[1];
    expect(shipped).toBe(join(repositoryRoot, "packages/cli/replays/first-run.json"));
    expect(JSON.parse(await readFile(shipped!, "utf8")).replies).toHaveLength(1);
    expectNoStackTrace(run.stderr);
  });

  it("with --model naming another provider, asks that provider and names the key it lacks", async () => {
    const run = await runMain(
      ["ask", "--model", "anthropic:claude-sonnet-4-5", "--pattern", "tools", question],
      {
        cwd: folder,
        env: { ANTHROPIC_API_KEY: "" },
      },
    );
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("model: anthropic:claude-sonnet-4-5 (live)");
    expect(run.stderr).toMatch(/needs ANTHROPIC_API_KEY, which is not set\. Export it/);
    expectNoStackTrace(run.stderr);
  });

  it("names a replay file that does not exist, and one that is not a recording", async () => {
    const missing = await runMain(["ask", "--replay", join(folder, "nope.json"), question], { cwd: folder });
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("nope.json does not exist");
    const notRecording = join(folder, "not-a-recording.json");
    await writeFile(notRecording, '["just a list"]');
    const bad = await runMain(["ask", "--replay", notRecording, "--pattern", "tools", question], {
      cwd: folder,
    });
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toMatch(/not-a-recording\.json is not a recording/);
    expectNoStackTrace(bad.stderr);
  });

  it("shows the stack trace only with --debug", async () => {
    const run = await runMain(["ask", "--debug", "--replay", join(folder, "nope.json"), question], {
      cwd: folder,
    });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/^\s+at /m);
  });
});

describe("ask with bad CSV input", () => {
  it("names a missing file", async () => {
    const replay = await replayFile("unused.json", ["unused"]);
    const run = await runCli(["ask", "--csv", "missing.csv", "--replay", replay, question], { cwd: folder });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(`codeaction: ${join(folder, "missing.csv")}: no such file`);
    expectNoStackTrace(run.stderr);
  });

  it("names the line of a ragged row, and refuses an empty file", async () => {
    const replay = await replayFile("unused.json", ["unused"]);
    await writeFile(join(folder, "ragged.csv"), "a,b,c\n1,2,3\n4,5\n");
    const ragged = await runCli(["ask", "--csv", "ragged.csv", "--replay", replay, question], {
      cwd: folder,
    });
    expect(ragged.exitCode).toBe(1);
    expect(ragged.stderr).toContain("ragged.csv line 3: the row has 2 fields but the header has 3");
    await writeFile(join(folder, "empty.csv"), "");
    const empty = await runCli(["ask", "--csv", "empty.csv", "--replay", replay, question], { cwd: folder });
    expect(empty.exitCode).toBe(1);
    expect(empty.stderr).toContain("empty.csv: the file is empty");
  });
});

describe("ask --pattern tools over a replayed model (no sandbox)", () => {
  it("calls load_orders, prints only the answer on stdout, says the model is a replay, and journals the run", async () => {
    const replay = await replayFile("tools.json", [
      { content: "", toolCalls: [{ name: "load_orders", args: { limit: 2 } }] },
      "North America leads.",
    ]);
    const cwd = await mkdtemp(join(folder, "run-"));
    const run = await runMain(["ask", "--pattern", "tools", "--csv", orders, "--replay", replay, question], {
      cwd,
    });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe("North America leads.\n");
    expect(run.stderr).toMatch(/model: a REPLAY of recorded replies from .*tools\.json/);
    const lines = (await readFile(join(cwd, ".codeaction/runs.jsonl"), "utf8")).trim().split("\n");
    expect(lines).toHaveLength(1);
    const record = JSON.parse(lines[0]!);
    expect(record).toMatchObject({
      question,
      pattern: "tools",
      status: "ok",
      answer: "North America leads.",
      model: { kind: "replay", file: replay },
      csv: [{ tool: "load_orders", rows: 500 }],
    });
    expect(record.toolCalls).toHaveLength(1);
    expect(record.toolCalls[0]).toMatchObject({ tool: "load_orders", args: { limit: 2 }, status: "ok" });
    expect(record.toolCalls[0].result).toEqual([
      {
        order_id: "O-0001",
        date: "2026-04-17",
        region: "EMEA",
        product: "Starter",
        quantity: 3,
        unit_price: 29,
      },
      {
        order_id: "O-0002",
        date: "2026-05-03",
        region: "EMEA",
        product: "Starter",
        quantity: 11,
        unit_price: 29,
      },
    ]);
  });

  it("--show-program in the tools pattern shows each call and the turn's timings", async () => {
    const replay = await replayFile("tools-show.json", [
      { content: "", toolCalls: [{ name: "load_orders", args: { limit: 1 } }] },
      "One order.",
    ]);
    const cwd = await mkdtemp(join(folder, "run-"));
    const run = await runMain(
      ["ask", "--pattern", "tools", "--csv", orders, "--replay", replay, "--show-program", question],
      { cwd },
    );
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe("One order.\n");
    expect(run.stderr).toMatch(/tool call load_orders: ok, /);
    expect(run.stderr).toMatch(
      /^timings: 1 tool calls \d+\.\d\d s, turn \d+\.\d\d s \(the rest is the model\)$/m,
    );
  });

  it("--json prints the run record, --journal PATH writes there and --no-journal writes nothing", async () => {
    const replay = await replayFile("plain.json", ["Forty-two."]);
    const cwd = await mkdtemp(join(folder, "run-"));
    const json = await runMain(
      ["ask", "--pattern", "tools", "--replay", replay, "--json", "--journal", "log/custom.jsonl", question],
      { cwd },
    );
    expect(json.exitCode).toBe(0);
    const record = JSON.parse(json.stdout);
    expect(record).toMatchObject({ version: 1, status: "ok", answer: "Forty-two.", question });
    // The journal's line is the record, chained (see journal.test.ts).
    const { chain, tag, ...journaled } = JSON.parse(await readFile(join(cwd, "log/custom.jsonl"), "utf8"));
    expect(journaled).toEqual(record);
    expect(chain).toMatchObject({ seq: 1, alg: "sha256" });
    expect(tag).toMatch(/^[0-9a-f]{64}$/);

    const quiet = await runMain(["ask", "--pattern", "tools", "--replay", replay, "--no-journal", question], {
      cwd,
    });
    expect(quiet.exitCode).toBe(0);
    await expect(readFile(join(cwd, ".codeaction/runs.jsonl"), "utf8")).rejects.toThrow(/ENOENT/);
  });

  it("neutralises escape sequences in the answer", async () => {
    const hostile = "Done.\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil";
    const replay = await replayFile("hostile.json", [hostile]);
    const cwd = await mkdtemp(join(folder, "run-"));
    for (const extra of [[], ["--json"]]) {
      const run = await runMain(["ask", "--pattern", "tools", "--replay", replay, ...extra, question], {
        cwd,
      });
      expect(run.exitCode).toBe(0);
      expect(run.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
      expect(run.stdout).toMatch(/\\(x1b|u001b)\]0;pwned/);
    }
  });
});

describe("codeaction mcp rules", () => {
  it("an --allow naming no tool of the wrapped servers stops before serving, listing the tools", async () => {
    const run = await runMain(["mcp", "--server", everythingServer, "--allow", "get_summ"], { cwd: folder });
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/--allow "get_summ" names no tool; the tools are: echo, .*get-sum/);
    expectNoStackTrace(run.stderr);
  });
});

describe("tools", () => {
  it("prints the Python stub of each CSV loader with its columns and row count", async () => {
    const run = await runMain(["tools", "--csv", orders]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain("def load_orders(*, offset: int = 0, limit: int | None = None)");
    expect(run.stdout).toContain("orders.csv (500 rows)");
    expect(run.stdout).toContain("quantity (int)");
    expect(run.stdout).toContain("unit_price (float)");
  });

  it("adds the tools of an MCP server given with --server", async () => {
    const server = `node ${join(repositoryRoot, "packages/core/test/fixtures/mcp-stdio-server.ts")} --tools=greet`;
    const run = await runMain(["tools", "--csv", orders, "--server", server]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain("def load_orders(");
    expect(run.stdout).toContain("def greet(*, name: str)");
  });
});

describe("doctor", () => {
  it("exits 1 with the fix when the engine cannot be reached", async () => {
    const run = await runMain(["doctor"], { env: { DOCKER_HOST: "unix:///nonexistent.sock" } });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(
      /FAIL\s+Docker endpoint\s+no Docker engine answered\. Tried unix:\/\/\/nonexistent\.sock \(ENOENT.*chosen because DOCKER_HOST is set/,
    );
    expect(run.stdout).toContain("code-action cannot run here");
    expect(run.stderr).toMatch(/Fix: start Docker/);
    expectNoStackTrace(run.stderr);
  });
});
