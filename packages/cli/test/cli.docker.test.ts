import { execFile } from "node:child_process";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { journalRecords, programReplay } from "./cli-files.ts";
import { binPath, repositoryRoot, runCli } from "./run-cli.ts";

const execFileAsync = promisify(execFile);

// The command line as a user runs it: spawned processes, real containers on the real engine, a
// replayed model. Each spawned command removes its own containers before it exits.

const orders = join(repositoryRoot, "examples/data/orders.csv");
const demoReplay = join(repositoryRoot, "examples/replays/q3-revenue.json");
const demoQuestion =
  "What was the revenue per region in Q3 2026 (July to September)? Revenue is quantity times unit price. Sort from highest to lowest.";
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-cli-docker-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("codeaction ask (code-action, real sandbox, replayed model)", () => {
  it("the README's main-job command, bash scripts/demo.sh, does its set-up and prints the four totals", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.OPENAI_API_KEY;
    delete env.OPENAI_BASE_URL;
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        "bash",
        ["scripts/demo.sh", "--no-journal"],
        { cwd: repositoryRoot, env, timeout: 600_000 },
        (error, stdout, stderr) =>
          resolve({ status: error ? ((error as { code?: number }).code ?? -1) : 0, stdout, stderr }),
      );
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/model: a REPLAY of recorded replies/);
    expect(JSON.parse(run.stdout)).toEqual([
      { region: "North America", revenue: 108664 },
      { region: "LATAM", revenue: 81328 },
      { region: "EMEA", revenue: 77689 },
      { region: "APAC", revenue: 65023 },
    ]);
  }, 660_000);

  it("the main job prints the four regions with the seed's totals, and journals the program", async () => {
    const cwd = await mkdtemp(join(folder, "main-job-"));
    const run = await runCli(["ask", "--csv", orders, "--replay", demoReplay, demoQuestion], { cwd });
    expect(run.stderr).toMatch(/model: a REPLAY of recorded replies/);
    expect(run.exitCode).toBe(0);
    const answer = JSON.parse(run.stdout) as { region: string; revenue: number }[];
    expect(answer).toEqual([
      { region: "North America", revenue: 108664 },
      { region: "LATAM", revenue: 81328 },
      { region: "EMEA", revenue: 77689 },
      { region: "APAC", revenue: 65023 },
    ]);
    expect(run.stdout.trim().split("\n")).toHaveLength(1);

    const [record] = await journalRecords(cwd);
    expect(record).toMatchObject({
      status: "ok",
      question: demoQuestion,
      pattern: "code-action",
      answer: run.stdout.trim(),
    });
    const attempts = record!.attempts as {
      program: string;
      status: string;
      toolCalls: { tool: string; status: string }[];
    }[];
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.program).toContain("orders = load_orders()");
    expect(attempts[0]!.toolCalls).toMatchObject([{ tool: "load_orders", status: "ok" }]);
  });

  it("gives the program typed rows from a CSV with a BOM, semicolons, quoted delimiters and an embedded newline", async () => {
    const csv = join(folder, "people.csv");
    await writeFile(
      csv,
      '\uFEFFname;city;visits;score;active;note\r\n"Smith, John";"Zürich; Altstadt";3;4.5;true;"line one\nline two"\r\nAda;Paris;;0.25;FALSE;\r\n',
    );
    const replay = await programReplay(folder, "typed-rows.json", [
      [
        "import json",
        "rows = load_people()",
        'print("RESULT: " + json.dumps([{key: [type(value).__name__, value] for key, value in row.items()} for row in rows]))',
      ].join("\n"),
    ]);
    const run = await runCli(["ask", "--csv", csv, "--replay", replay, "--no-journal", "What did you get?"], {
      cwd: folder,
    });
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([
      {
        name: ["str", "Smith, John"],
        city: ["str", "Zürich; Altstadt"],
        visits: ["int", 3],
        score: ["float", 4.5],
        active: ["bool", true],
        note: ["str", "line one\nline two"],
      },
      {
        name: ["str", "Ada"],
        city: ["str", "Paris"],
        visits: ["NoneType", null],
        score: ["float", 0.25],
        active: ["bool", false],
        note: ["NoneType", null],
      },
    ]);
  });

  it("neutralises escape sequences a program prints, in the answer and in --show-program", async () => {
    const replay = await programReplay(folder, "escapes.json", [
      [
        'print("\\x1b]0;pwned\\x07\\x1b]52;c;ZWNobw==\\x07 title changed?")',
        'print("RESULT: done\\x1b[2J\\x1b[31m red")',
      ].join("\n"),
    ]);
    const run = await runCli(["ask", "--replay", replay, "--show-program", "--no-journal", "Say done."], {
      cwd: folder,
    });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe("done\\x1b[2J\\x1b[31m red\n");
    expect(run.stderr).toContain("\\x1b]0;pwned\\x07");
    expect(run.stdout + run.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });

  it("--show-program shows the program, each tool call and the timings on stderr, nothing extra on stdout", async () => {
    const run = await runCli(
      ["ask", "--csv", orders, "--replay", demoReplay, "--show-program", "--no-journal", demoQuestion],
      { cwd: folder },
    );
    expect(run.exitCode).toBe(0);
    expect(run.stdout.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toContain("orders = load_orders()");
    expect(run.stderr).toMatch(/tool call load_orders: ok, 500 items/);
    expect(run.stderr).toMatch(
      /timings, attempt 1 \(ok\): model [\d.]+ s, container start [\d.]+ s, run [\d.]+ s/,
    );
  });

  it("fails with one line and exit 1 when every attempt fails, and journals both programs", async () => {
    const cwd = await mkdtemp(join(folder, "failing-"));
    const replay = await programReplay(folder, "failing.json", [
      'print("no result here")',
      'raise SystemExit("still broken")',
    ]);
    const run = await runCli(["ask", "--replay", replay, "Fail twice."], { cwd });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^codeaction: The code-action turn failed: all 2 attempt\(s\) failed/m);
    expect(run.stderr).not.toMatch(/^\s+at /m);
    const [record] = await journalRecords(cwd);
    expect(record).toMatchObject({ status: "failed", error: { code: "attempts-exhausted" } });
    expect((record!.attempts as { program: string }[]).map((attempt) => attempt.program)).toEqual([
      'print("no result here")',
      'raise SystemExit("still broken")',
    ]);
  });

  it("bridges the tools of an MCP server given with --server into the program", async () => {
    const server = `node ${join(repositoryRoot, "packages/core/test/fixtures/mcp-stdio-server.ts")} --tools=greet`;
    const replay = await programReplay(folder, "mcp.json", ['print("RESULT: " + greet(name="Ada"))']);
    const run = await runCli(["ask", "--server", server, "--replay", replay, "--no-journal", "Greet Ada."], {
      cwd: folder,
    });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe("Hello, Ada!\n");
  });
});

/** Runs the docker CLI; resolves with its stdout. */
function dockerCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("docker", args, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

/** The engine's container events (create, destroy) and the containers left, of one CLI process. */
async function containerEventsOf(pid: number | undefined, since: number) {
  const label = `label=codeaction.owner-pid=${pid}`;
  const until = String(Math.floor(Date.now() / 1000) + 1);
  const events = (
    await dockerCli([
      "events",
      "--since",
      String(since),
      "--until",
      until,
      "--filter",
      "type=container",
      "--filter",
      label,
      "--format",
      "{{.Action}} {{.Actor.ID}}",
    ])
  )
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => line.split(" ") as [string, string]);
  const left = (await dockerCli(["ps", "-aq", "--no-trunc", "--filter", label])).split("\n").filter(Boolean);
  return {
    created: events.filter(([action]) => action === "create").map(([, id]) => id),
    destroyed: events.filter(([action]) => action === "destroy").map(([, id]) => id),
    left,
  };
}

describe("codeaction ask's sandbox, started in a worker thread while LangChain loads", () => {
  it("runs the turn in the one container it started, and removes it", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    // A data file makes ask start its prelaunch on any machine (without one, only above two cores).
    await writeFile(join(folder, "one.csv"), "one\n1\n");
    const replay = await programReplay(folder, "one.json", ['print("RESULT: 1")']);
    const run = await runCli(
      ["ask", "--csv", "one.csv", "--replay", replay, "--no-journal", "--debug", "What is one?"],
      { cwd: folder },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toBe("1\n");
    // The manager used the prelaunch: its engine checks, and its container (no "not used" line).
    expect(run.stderr).toContain("engine checks: the prelaunch's, same settings");
    expect(run.stderr).not.toContain("prelaunched container not used");
    const { created, destroyed, left } = await containerEventsOf(run.pid, since);
    // One create: the prelaunched container was taken over, not replaced by one of the manager's own.
    expect(created).toHaveLength(1);
    expect(destroyed).toEqual(created);
    expect(left).toEqual([]);
  });

  it("mounts its data file while LangChain loads: the turn copies nothing, the program reads it", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    await writeFile(join(folder, "sizes.csv"), "size\n3\n4\n");
    const replay = await programReplay(folder, "sizes.json", [
      'import csv\nrows = list(csv.DictReader(open("/workspace/data/sizes.csv")))\nprint("RESULT: " + str(sum(int(row["size"]) for row in rows)))',
    ]);
    const run = await runCli(
      ["ask", "--csv", "sizes.csv", "--replay", replay, "--no-journal", "--debug", "Sum of sizes?"],
      { cwd: folder },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toBe("7\n");
    expect(run.stderr).toContain("files placed before the turn (a prelaunch's)");
    expect(run.stderr).toContain('"containerPath":"/workspace/data/sizes.csv","bytes":9');
    // A local engine: the prelaunch bind-mounted it read-only at its start; --debug says which way it went.
    expect(run.stderr).toContain('"files":[{"containerPath":"/workspace/data/sizes.csv","how":"mounted"}]');
    const { created, destroyed, left } = await containerEventsOf(run.pid, since);
    expect(created).toHaveLength(1);
    expect(destroyed).toEqual(created);
    expect(left).toEqual([]);
  });

  it("copies a data file named through a link, and --debug says why it was not mounted", async () => {
    await writeFile(join(folder, "sizes-target.csv"), "size\n3\n4\n");
    await symlink(join(folder, "sizes-target.csv"), join(folder, "linked-sizes.csv"));
    const replay = await programReplay(folder, "linked-sizes.json", [
      'import csv\nrows = list(csv.DictReader(open("/workspace/data/linked-sizes.csv")))\nprint("RESULT: " + str(sum(int(row["size"]) for row in rows)))',
    ]);
    const run = await runCli(
      ["ask", "--csv", "linked-sizes.csv", "--replay", replay, "--no-journal", "--debug", "Sum of sizes?"],
      { cwd: folder },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toBe("7\n");
    expect(run.stderr).toMatch(/"reason":"it is a link"[^\n]*"msg":"data file copied: a mount was refused"/);
    expect(run.stderr).toContain(
      '"files":[{"containerPath":"/workspace/data/linked-sizes.csv","how":"copied"}]',
    );
  });

  it("a command that fails after the start (a ragged CSV row) leaves no container", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    await writeFile(join(folder, "ragged.csv"), "a,b,c\n1,2,3\n4,5\n");
    const replay = await programReplay(folder, "unused.json", ['print("RESULT: 1")']);
    const run = await runCli(["ask", "--csv", "ragged.csv", "--replay", replay, "--no-journal", "Sum a."], {
      cwd: folder,
    });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("ragged.csv line 3");
    const { created, destroyed, left } = await containerEventsOf(run.pid, since);
    expect(destroyed.sort()).toEqual(created.sort());
    expect(left).toEqual([]);
  });
});

describe("codeaction sandbox run", () => {
  it("runs the seed's hostile program into six dead ends (and the IPv6 and interface extras)", async () => {
    const run = await runCli(["sandbox", "run", join(repositoryRoot, "examples/hostile.py")], {
      env: { OPENAI_API_KEY: "sk-must-not-cross" },
    });
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines).toHaveLength(8);
    expect(lines[0]).toMatch(/^1\. \/etc\/passwd starts with: root:x:0:0:root:/);
    expect(lines[1]).toBe("2. Host home folders visible: False");
    expect(lines[2]).toBe("3. OPENAI_API_KEY in environment: False");
    expect(lines[3]).toMatch(/^4\. Wrote to \/etc: \[Errno 30\] Read-only file system/);
    expect(lines[4]).toMatch(/^5\. Network by name: <urlopen error \[Errno -[23]\]/);
    expect(lines[5]).toBe("6. Network by IP: [Errno 101] Network is unreachable");
    expect(lines[6]).toMatch(/^7\. Network by IPv6: \[Errno (101|99|97)\]/);
    expect(lines[7]).toBe("8. Interfaces: lo");
    expect(run.stderr).toMatch(/\[sandbox\] exit 0/);
  });

  it("reports a program killed for memory, and one killed at its time limit", async () => {
    const greedy = join(folder, "greedy.py");
    await writeFile(greedy, 'blocks = [bytearray(50_000_000) for _ in range(20)]\nprint("got 1 GB")\n');
    const memory = await runCli([
      "sandbox",
      "run",
      greedy,
      "--memory",
      "256M",
      "--cpus",
      "1",
      "--timeout",
      "30",
    ]);
    expect(memory.exitCode).toBe(1);
    expect(memory.stdout).not.toContain("got 1 GB");
    expect(memory.stderr).toMatch(
      /\[sandbox\] exit 137: killed by the kernel for going over its memory limit \(256M\)/,
    );

    const slow = join(folder, "slow.py");
    await writeFile(slow, "while True:\n    pass\n");
    const time = await runCli(["sandbox", "run", slow, "--timeout", "3"]);
    expect(time.exitCode).toBe(1);
    expect(time.stderr).toMatch(
      /\[sandbox\] timed out after 3 s; the program and every process it started were killed/,
    );
  });
});

describe("codeaction doctor", () => {
  it("finds the engine, the image and enforced limits, and exits 0", async () => {
    const run = await runCli(["doctor"]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/^ok\s+Docker endpoint/m);
    expect(run.stdout).toMatch(/^ok\s+Image\s+codeaction\/python:3\.11 present/m);
    expect(run.stdout).toMatch(
      /^ok\s+Memory limit\s+asked for 256M, the container's cgroup says \d+ \(enforced\)/m,
    );
    expect(run.stdout).toMatch(
      /^ok\s+Pids limit\s+asked for 64, the container's cgroup says 64 \(enforced\)/m,
    );
    expect(run.stdout).toMatch(/^ok\s+Privileges\s+capabilities none, no-new-privileges on/m);
    expect(run.stdout).toMatch(
      /^ok\s+Engine\s+Docker \S+ \(API [\d.]+\), linux\/\w+, kernel \S+, cgroup v[12]/m,
    );
    expect(run.stdout).toMatch(/^ok\s+Runtimes\s+.*\brunsc\b.*gVisor available as runsc$/m);
    expect(run.stdout).toContain("code-action can run here.");
  });
});

describe("codeaction image build", () => {
  it("reuses images built from the current recipe, for the base and the data flavour", async () => {
    const run = await runCli(["image", "build", "--all"]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^codeaction\/python:3\.11 is current \(recipe [0-9a-f]{16}\); nothing to build \(--force rebuilds\)$/,
      ),
      expect.stringMatching(
        /^codeaction\/python:3\.11-data is current \(recipe [0-9a-f]{16}\); nothing to build/,
      ),
    ]);
    expect(run.stderr).toBe("");
  });

  it("follows a build's steps on a terminal, says one line in a pipe, nothing with --quiet, and shows the log of a failed build", async () => {
    // Its own image: the recipe's Dockerfile FROM the base image already here (no registry, a few seconds).
    const tag = `codeaction-test/build-progress:${process.pid}`;
    const args = ["image", "build", "--base-image", "codeaction/python:3.11", "--tag", tag];
    try {
      const command = [process.execPath, binPath, ...args].map((part) => `'${part}'`).join(" ");
      // `script` gives the CLI a pseudo-terminal for stdout and stderr (both arrive as stdout here).
      const onTerminal = await runCli([], {
        timeoutMs: 300_000,
        command: ["script", "-qefc", command, "/dev/null"],
      });
      expect(onTerminal.exitCode, onTerminal.stdout).toBe(0);
      expect(onTerminal.stdout).toContain(`building ${tag}: step 6 of 12: RUN `);
      expect(onTerminal.stdout).toMatch(
        new RegExp(`\\r\\u001b\\[K${tag} built \\(dockerfile, recipe [0-9a-f]{16}\\) in `),
      );
      const piped = await runCli(args, { timeoutMs: 300_000 });
      expect(piped.exitCode, piped.stderr).toBe(0);
      expect(piped.stderr).toBe(`[codeaction] building ${tag} (its log is shown if it fails)\n`);
      expect(piped.stdout).toMatch(
        new RegExp(`^${tag} built \\(dockerfile, recipe [0-9a-f]{16}\\) in [\\d.]+s\\n$`),
      );
      const quiet = await runCli([...args, "--quiet"], { timeoutMs: 300_000 });
      expect(quiet.exitCode, quiet.stderr).toBe(0);
      expect(quiet.stderr).toBe("");
      expect(quiet.stdout).toContain(`${tag} built`);
    } finally {
      await execFileAsync("docker", ["rmi", tag]).catch(() => {});
    }
    // A base the engine refuses (no pull, nothing built): the error, after the log so far.
    const failed = await runCli(
      ["image", "build", "--base-image", "codeaction-test/Not-Lowercase:0", "--tag", tag, "--quiet"],
      { timeoutMs: 300_000 },
    );
    expect(failed.exitCode).toBe(1);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toContain(`build log of ${tag}:\n`);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the Dockerfile's own text
    expect(failed.stderr).toContain("  Step 2/12 : FROM ${BASE}\n");
    expect(failed.stderr).toMatch(/^codeaction: docker build of .* failed: invalid reference format/m);
  }, 900_000);
});
