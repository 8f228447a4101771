import { readFile } from "node:fs/promises";
import { startOpenAIFixture } from "@codeaction/core/testing";
import { describe, expect, it } from "vitest";
import { containersLeftBy, type ExampleRun, runExample } from "./run-example.ts";

// Every example runs as a user would run it (`node examples/<name>.ts`, a separate process) against
// the real engine, with no OPENAI_API_KEY: the model examples play their replays. What they print
// is what docs/examples.md shows.

const replayLine = /^model: a REPLAY of recorded replies from examples\/replays\/[a-z-]+\.json/m;

// The seed's totals, checked by hand against the CSV (also what chat-agent.ts computes in plain code).
const q3Totals = [
  { region: "North America", revenue: 108664 },
  { region: "LATAM", revenue: 81328 },
  { region: "EMEA", revenue: 77689 },
  { region: "APAC", revenue: 65023 },
];

async function run(name: string, options: { env?: Record<string, string> } = {}): Promise<ExampleRun> {
  const result = await runExample(name, options);
  expect(result.exitCode, `${name} failed:\n${result.stderr}`).toBe(0);
  expect(await containersLeftBy(result.pid)).toEqual([]);
  return result;
}

describe.concurrent("the examples, run as processes", () => {
  it("code-agent.ts prints the four correct totals, computed by the program in a container", async () => {
    const { stdout, stderr } = await run("code-agent");
    expect(stderr).toMatch(replayLine);
    expect(stderr).toContain("code-action program:\nimport json");
    // The program's own line, printed in the container: it really ran over the 500 rows.
    expect(stderr).toContain('stdout="166 of 500 orders fall in Q3 2026\\n');
    const answer = /^>>> (.*)$/m.exec(stdout)?.[1];
    expect(JSON.parse(answer ?? "null")).toEqual(q3Totals);
  });

  it("steps-and-threads.ts answers in two steps, then a follow-up from the rows the first question kept", async () => {
    const { stdout, stderr } = await run("steps-and-threads");
    expect(stderr).toMatch(replayLine);
    expect(stdout).toContain("North America: 108664.00; LATAM: 81328.00; EMEA: 77689.00; APAC: 65023.00");
    expect(stdout).toContain("(step 1: no-result, step 2: ok; tool calls: 1)");
    // The follow-up's program reads `q3`, left by the first question's: no call, one step.
    expect(stdout).toContain("Business (299 units)\n(step 1: ok; tool calls: 0)");
  });

  it("chat-agent.ts calls load_orders once, prints the model's sums and the plain-code check", async () => {
    const { stdout, stderr } = await run("chat-agent");
    expect(stderr).toMatch(replayLine);
    expect(stderr.match(/^-> Invoking tool: load_orders with \{\}$/gm)).toHaveLength(1);
    expect(stderr).toMatch(/^<- Tool result from load_orders: \[\{"order_id":"O-0001","date":"2026-04-17"/m);
    expect(stdout).toContain(">>> I loaded the orders");
    expect(stdout).toContain("- North America: $109,555");
    expect(stdout.split("Checked in plain code:\n")[1]?.trim().split("\n")).toEqual([
      "North America: 108,664.00",
      "LATAM: 81,328.00",
      "EMEA: 77,689.00",
      "APAC: 65,023.00",
    ]);
  });

  it("code-mode-server.ts lists load_orders' stub and runs the Q3 program over MCP, in a container", async () => {
    const { stdout } = await run("code-mode-server");
    expect(stdout).toContain("tools: list_functions, run_program\n");
    expect(stdout).toContain("def load_orders() -> Any:");
    expect(stdout).toContain(
      ">>> [(108664, 'North America'), (81328, 'LATAM'), (77689, 'EMEA'), (65023, 'APAC')]",
    );
  });

  it("observability.ts prints the program's lines live, the usage with its cost, and its spans", async () => {
    const { stdout } = await run("observability");
    const lines = stdout.split("\n");
    expect(lines.indexOf("[program stdout] counting the rows...")).toBeLessThan(lines.indexOf(">>> 500"));
    expect(stdout).toMatch(
      /^usage: 1800 in, 60 out, 1 model call\(s\), 1 attempt\(s\), [\d.]+ s in the sandbox, \$0\.000570$/m,
    );
    for (const span of ["chat scripted", "execute_program", "invoke_agent codeaction"]) {
      expect(stdout).toContain(`name: '${span}'`);
    }
  });

  it("security-audit.ts reads the container's own /etc/passwd and finds no network", async () => {
    const { stdout, stderr } = await run("security-audit");
    expect(stderr).toMatch(replayLine);
    expect(stderr).toContain('fetch_status("https://example.invalid")');
    expect(stdout).toMatch(/^>>> root:x:0:0:root:\/root:\/bin\/bash \| URLError: .*name resolution/m);
  });

  it("hostile.ts: six attempts, six dead ends (with a key set in the shell that starts it)", async () => {
    const { stdout, stderr } = await run("hostile", { env: { OPENAI_API_KEY: "sk-example-not-a-real-key" } });
    expect(stderr).not.toMatch(replayLine); // no model here
    const lines = stdout.split("\n");
    expect(lines[0]).toBe("1. /etc/passwd starts with: root:x:0:0:root:/root:/bin/bash");
    expect(lines[1]).toBe("2. Host home folders visible: False");
    expect(lines[2]).toBe("3. OPENAI_API_KEY in environment: False");
    expect(lines[3]).toBe("4. Wrote to /etc: [Errno 30] Read-only file system: '/etc/profile.d/backdoor.sh'");
    expect(lines[4]).toMatch(/^5\. Network by name: <urlopen error \[Errno -[0-9]+\] .*>$/);
    expect(lines[5]).toBe("6. Network by IP: [Errno 101] Network is unreachable");
  });

  it("limits.ts: 256M -> exit 137 (out of memory); an endless loop -> timed out after 5 seconds", async () => {
    const { stdout } = await run("limits");
    expect(stdout).toMatch(/^memory: exit 137, out of memory true, output "(Killed\\n)?"$/m);
    expect(stdout).toContain(
      'time:   exit -1, timed out true, "Command timed out after 5 seconds; its processes were killed"',
    );
  });

  it("shell-agent.ts writes scripts/fib.py, runs it and reads back what it printed", async () => {
    const { stdout, stderr } = await run("shell-agent");
    expect(stderr).toMatch(replayLine);
    expect(stderr).toContain(
      "<- Tool result from sandbox_write_file: Wrote 139 bytes to /workspace/scripts/fib.py.",
    );
    expect(stderr).toMatch(/^<- Tool result from sandbox_exec: exit code: 0 /m);
    // Read back from the container: only a real run of fib.py wrote this.
    expect(stderr).toContain(
      "<- Tool result from sandbox_read_file: 0 1 1 2 3 5 8 13 21 34 55 89 144 233 377 610 987 1597 2584 4181",
    );
    expect(stdout).toMatch(/^>>> .*the 20th is 4181\.$/m);
  });

  it("config-validation.ts prints the three settings lines without starting a container", async () => {
    const { stdout, stderr } = await run("config-validation");
    expect(stderr).toBe("");
    expect(stdout.trimEnd().split("\n")).toEqual([
      "{}: network=none, pidsLimit=256, diskLimit=1G",
      '{"memoryLimit":"512M"}: network=none, pidsLimit=256, diskLimit=1G',
      expect.stringMatching(
        /^\{"network_mode":"none"\}: SandboxConfigError: Invalid sandbox settings: unknown sandbox option 'network_mode' \(use 'network': .*\)\. Valid options: backend, /,
      ),
    ]);
  });
});

// With a key, the examples ask "openai:gpt-5-mini" over HTTP; OPENAI_BASE_URL points the real client at
// a local OpenAI-compatible fixture that plays the same recorded replies.
describe.concurrent("the model examples with OPENAI_API_KEY set (live path, local fixture server)", () => {
  async function runLive(name: string) {
    const { replies } = JSON.parse(
      await readFile(new URL(`./replays/${name}.json`, import.meta.url), "utf8"),
    );
    const fixture = await startOpenAIFixture({ replies });
    try {
      const result = await run(name, {
        env: { OPENAI_API_KEY: "sk-fixture-not-a-real-key", OPENAI_BASE_URL: fixture.baseURL },
      });
      expect(result.stderr).not.toMatch(replayLine);
      expect(fixture.requests.length).toBe(replies.length);
      expect(fixture.requests.every((request) => request.body.model === "gpt-5-mini")).toBe(true);
      return { ...result, requests: fixture.requests };
    } finally {
      await fixture.close();
    }
  }

  it("code-agent.ts asks gpt-5-mini and prints the four correct totals", async () => {
    const { stdout } = await runLive("code-agent");
    expect(JSON.parse(/^>>> (.*)$/m.exec(stdout)?.[1] ?? "null")).toEqual(q3Totals);
  });

  it("chat-agent.ts offers load_orders to gpt-5-mini as a tool", async () => {
    const { stdout, requests } = await runLive("chat-agent");
    expect(JSON.stringify(requests[0]?.body.tools)).toContain('"name":"load_orders"');
    expect(stdout).toContain("Checked in plain code:\nNorth America: 108,664.00");
  });
});
