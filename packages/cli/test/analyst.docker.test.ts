import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startOpenAIFixture } from "@codeaction/core/testing";
import { PNG } from "pngjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTwins } from "./data-twins.ts";
import { binPath, repositoryRoot, runCli } from "./run-cli.ts";

// The analyst's desk through the CLI process, on real containers, with replayed programs: answers
// as tables, files out of /workspace/out (a matplotlib chart from the data image), and refusals.

const orders = join(repositoryRoot, "examples/data/orders.csv");
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-analyst-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function programReplay(name: string, programs: string[]): Promise<string> {
  const path = join(folder, name);
  const replies = programs.map((program) => `The program.\n\n\`\`\`python\n${program}\n\`\`\``);
  await writeFile(path, JSON.stringify({ replies }));
  return path;
}

async function lastJournalRecord(cwd: string): Promise<Record<string, unknown>> {
  const lines = (await readFile(join(cwd, ".codeaction/runs.jsonl"), "utf8")).trim().split("\n");
  return JSON.parse(lines.at(-1)!) as Record<string, unknown>;
}

describe("codeaction ask --format table (real sandbox, replayed model)", () => {
  it("prints records as an aligned table, a dict as key/value lines and a scalar as itself", async () => {
    const answers = {
      records:
        'import json\nprint("RESULT: " + json.dumps([{"region": "North America", "revenue": 108664.0}, {"region": "APAC", "revenue": 65023.5}]))',
      dict: 'import json\nprint("RESULT: " + json.dumps({"orders": 1250, "regions": 4}))',
      scalar: 'print("RESULT: 332704.5")',
    };
    const outputs: Record<string, string> = {};
    for (const [name, program] of Object.entries(answers)) {
      const replay = await programReplay(`${name}.json`, [program]);
      const run = await runCli(["ask", "--replay", replay, "--format", "table", "--no-journal", "Show it."], {
        cwd: folder,
      });
      expect(run.exitCode, run.stderr).toBe(0);
      outputs[name] = run.stdout;
    }
    expect(outputs.records).toBe(
      [
        "region           revenue",
        "─────────────  ─────────",
        "North America  108,664.0",
        "APAC            65,023.5",
        "",
      ].join("\n"),
    );
    expect(outputs.dict).toBe("orders:   1,250\nregions:  4\n");
    expect(outputs.scalar).toBe("332704.5\n");
  });
});

describe("files out of /workspace/out (real sandbox, replayed model)", () => {
  it("brings back the matplotlib chart of Q3 revenue from the data image as a valid 600x375 PNG (6 x 3.75 inches at 100 dpi)", async () => {
    const cwd = await mkdtemp(join(folder, "chart-"));
    const replay = join(repositoryRoot, "examples/replays/q3-revenue-chart.json");
    const run = await runCli(
      ["ask", "--data", "--csv", orders, "--replay", replay, "Chart the Q3 revenue per region."],
      { cwd, timeoutMs: 200_000 },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([
      { region: "North America", revenue: 108664 },
      { region: "LATAM", revenue: 81328 },
      { region: "EMEA", revenue: 77689 },
      { region: "APAC", revenue: 65023 },
    ]);
    const record = await lastJournalRecord(cwd);
    const runId = record.runId as string;
    const path = join(cwd, "codeaction-out", runId, "q3-revenue.png");
    expect(run.stderr).toContain(`file: ${path} (`);
    const bytes = await readFile(path);
    const image = PNG.sync.read(bytes);
    expect([image.width, image.height]).toEqual([600, 375]);
    // Drawn, not blank: the bars' colour (#4c72b0) is there.
    let barPixels = 0;
    for (let offset = 0; offset < image.data.length; offset += 4) {
      if (image.data[offset] === 0x4c && image.data[offset + 1] === 0x72 && image.data[offset + 2] === 0xb0)
        barPixels += 1;
    }
    expect(barPixels).toBeGreaterThan(10_000);
    expect(record.files).toEqual([
      {
        name: "q3-revenue.png",
        size: bytes.length,
        mediaType: "image/png",
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        path,
      },
    ]);
  }, 220_000);

  it("refuses a link, a FIFO and an oversized file, reports each, and brings the rest back byte for byte", async () => {
    const cwd = await mkdtemp(join(folder, "refusals-"));
    const replay = await programReplay("refusals.json", [
      [
        "import os",
        'os.makedirs("/workspace/out/sub dir", exist_ok=True)',
        'os.symlink("/etc/passwd", "/workspace/out/passwd-link")',
        'os.mkfifo("/workspace/out/pipe")',
        'with open("/workspace/out/huge.bin", "wb") as handle:',
        "    handle.write(b'x' * (10 * 1024 * 1024 + 1))",
        'with open("/workspace/out/sub dir/all-bytes.bin", "wb") as handle:',
        "    handle.write(bytes(range(256)))",
        'print("RESULT: saved")',
      ].join("\n"),
    ]);
    const run = await runCli(["ask", "--replay", replay, "--out", "results", "Save some files."], { cwd });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toBe("saved\n");
    const record = await lastJournalRecord(cwd);
    const saved = join(cwd, "results", record.runId as string, "sub_dir/all-bytes.bin");
    expect([...(await readFile(saved))]).toEqual([...Array(256).keys()]);
    expect(record.files).toMatchObject([{ name: "sub_dir/all-bytes.bin", size: 256, path: saved }]);
    const refused = record.refusedFiles as { name: string; reason: string }[];
    expect(refused.map((entry) => entry.name).sort()).toEqual(["huge.bin", "passwd-link", "pipe"]);
    expect(refused.find((entry) => entry.name === "passwd-link")?.reason).toMatch(/it is a link/);
    expect(refused.find((entry) => entry.name === "pipe")?.reason).toMatch(/FIFO, device or socket/);
    expect(refused.find((entry) => entry.name === "huge.bin")?.reason).toMatch(
      /10485761 bytes, over the limit of 10485760 per file/,
    );
    expect(run.stderr).toMatch(/\/workspace\/out\/passwd-link did not come back: it is a link/);
  }, 200_000);
});

describe("data files read directly at /workspace/data (real sandbox, replayed model)", () => {
  it("a 20 MB CSV is read with pandas from /workspace/data, read-only, without paging through the tool; pandas was imported ahead", async () => {
    const cwd = await mkdtemp(join(folder, "big-"));
    const big = join(cwd, "big.csv");
    const lines = ["id,region,amount"];
    let expected = 0;
    const regions = ["North America", "EMEA", "APAC", "LATAM"];
    for (let index = 0; index < 800_000; index += 1) {
      const amount = (index % 997) + 0.25;
      if (index % 4 === 1) expected += amount;
      lines.push(`${index},${regions[index % 4]},${amount}`);
    }
    await writeFile(big, `${lines.join("\n")}\n`);
    const replay = await programReplay("pandas.json", [
      [
        "import json, sys",
        // --data: the interpreter imported pandas while it waited for this program.
        'preloaded = "pandas" in sys.modules',
        "import pandas as pd",
        'frame = pd.read_csv("/workspace/data/big.csv")',
        "try:",
        '    open("/workspace/data/big.csv", "a").close()',
        '    writable = "yes"',
        "except PermissionError:",
        '    writable = "no"',
        "try:",
        '    open("/workspace/data/new.txt", "w").close()',
        '    sealed = "no"',
        "except PermissionError:",
        '    sealed = "yes"',
        'emea = float(frame.loc[frame["region"] == "EMEA", "amount"].sum())',
        'print("RESULT: " + json.dumps({"rows": len(frame), "emea": round(emea, 2), "writable": writable, "sealed": sealed, "preloaded": preloaded}))',
      ].join("\n"),
    ]);
    const run = await runCli(
      ["ask", "--data", "--csv", big, "--replay", replay, "--format", "json", "EMEA total?"],
      {
        cwd,
        timeoutMs: 280_000,
      },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      rows: 800_000,
      emea: Math.round(expected * 100) / 100,
      writable: "no",
      sealed: "yes",
      preloaded: true,
    });
    const record = await lastJournalRecord(cwd);
    expect((record.toolCalls as unknown[]).length).toBe(0);
    // In a pipe the copy into the sandbox is not counted (a terminal only: the next test).
    expect(run.stderr).not.toContain("placing big.csv");
  }, 300_000);
});

describe("data files beyond CSV (real sandbox, replayed model)", () => {
  it("xlsx and parquet twins of orders.csv give the CSV's answer, through load_<name>() and read directly", async () => {
    const cwd = await mkdtemp(join(folder, "twins-"));
    const twins = await writeTwins(orders, cwd);
    // One program answers from all three files, each two ways: the loader tool and pandas.
    const replay = await programReplay("twins.json", [
      [
        "import json",
        "import pandas as pd",
        "def q3(rows):",
        "    totals = {}",
        "    for row in rows:",
        '        if "2026-07-01" <= str(row["date"])[:10] <= "2026-09-30":',
        '            totals[row["region"]] = totals.get(row["region"], 0) + row["quantity"] * row["unit_price"]',
        "    return {region: round(total, 2) for region, total in sorted(totals.items())}",
        "frames = {",
        '    "csv": pd.read_csv("/workspace/data/orders.csv"),',
        '    "xlsx": pd.read_excel("/workspace/data/orders.xlsx"),',
        '    "parquet": pd.read_csv("/workspace/data/orders.parquet.csv"),',
        "}",
        "answers = {name: q3(frame.to_dict('records')) for name, frame in frames.items()}",
        'answers.update({"tool-csv": q3(load_orders()), "tool-xlsx": q3(load_orders_2()), "tool-parquet": q3(load_orders_3())})',
        'print("RESULT: " + json.dumps(answers))',
      ].join("\n"),
    ]);
    const run = await runCli(
      [
        ...["ask", "--data", "--csv", orders, "--file", twins.xlsx, "--file", twins.parquet],
        ...["--replay", replay, "--format", "json", "--show-program", "Q3 revenue per region in each file?"],
      ],
      { cwd, timeoutMs: 280_000 },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const answers = JSON.parse(run.stdout) as Record<string, Record<string, number>>;
    const expected = { APAC: 65023, EMEA: 77689, LATAM: 81328, "North America": 108664 };
    expect(Object.keys(answers).sort()).toEqual(
      ["csv", "parquet", "tool-csv", "tool-parquet", "tool-xlsx", "xlsx"].sort(),
    );
    for (const answer of Object.values(answers)) expect(answer).toEqual(expected);
    const record = await lastJournalRecord(cwd);
    expect(
      (record.csv as { tool: string; format?: string }[]).map((table) => [table.tool, table.format]),
    ).toEqual([
      ["load_orders", undefined],
      ["load_orders_2", "xlsx"],
      ["load_orders_3", "parquet"],
    ]);
    expect(run.stderr).not.toMatch(/rows, [\d.]+ (of [\d.]+ )?MB/);
  }, 300_000);
});

describe("progress while a file is read", () => {
  it("counts the bytes of a data file copied into the sandbox, on a terminal", async () => {
    const cwd = await mkdtemp(join(folder, "placing-"));
    // About 9.4 MB: a report at 4 MiB and at 8 MiB of the copy, and one at its end. Only its owner
    // may read it, so it is copied, not mounted (the sandbox's user could not read a mount of it).
    const rows = Array.from({ length: 200_000 }, (_, index) => `${index},${"y".repeat(40)}`);
    await writeFile(join(cwd, "big.csv"), `id,text\n${rows.join("\n")}\n`, { mode: 0o600 });
    const replay = await programReplay("lines.json", [
      'print("RESULT: " + str(sum(1 for _ in open("/workspace/data/big.csv"))))',
    ]);
    const args = ["ask", "--csv", "big.csv", "--replay", replay, "--format", "text", "--no-journal", "Rows?"];
    const command = [process.execPath, binPath, ...args].map((part) => `'${part}'`).join(" ");
    const run = await runCli([], {
      cwd,
      timeoutMs: 200_000,
      command: ["script", "-qefc", command, "/dev/null"],
    });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.stdout).toMatch(/placing big\.csv in the sandbox: [4-8]\.\d of 9\.\d MB/);
    expect(run.stdout).toMatch(/placing big\.csv in the sandbox: (9\.\d) of \1 MB/);
    expect(run.stdout).toContain("200001");
  }, 300_000);

  it("counts rows and bytes on a terminal, and says nothing of them in a pipe or with --quiet", async () => {
    const cwd = await mkdtemp(join(folder, "progress-"));
    const file = join(cwd, "wide.csv");
    const rows = Array.from({ length: 25_000 }, (_, index) => `${index},${"x".repeat(40)}`);
    await writeFile(file, `id,text\n${rows.join("\n")}\n`);
    await writeFile(join(cwd, "count.py"), 'print("RESULT: " + str(len(load_wide())))\n');
    // The file is read before the sandbox is checked: an image that is not there ends each run
    // right after the reading, without starting a container.
    const args = ["run", "count.py", "--csv", "wide.csv", "--image", "codeaction-test/absent:0"];
    const absent = /The sandbox image "codeaction-test\/absent:0" is not present/;
    // `script` gives the CLI a real terminal (a pseudo-terminal) for stdout and stderr.
    const command = [process.execPath, binPath, ...args].map((part) => `'${part}'`).join(" ");
    const onTerminal = await runCli([], {
      cwd,
      timeoutMs: 200_000,
      command: ["script", "-qefc", command, "/dev/null"],
    });
    expect(onTerminal.stdout).toMatch(absent);
    expect(onTerminal.stdout).toContain("reading wide.csv: 10,000 rows, 0.");
    expect(onTerminal.stdout).toMatch(/reading wide\.csv: 25,000 rows, 1\.\d of 1\.\d MB/);
    const piped = await runCli(args, { cwd, timeoutMs: 200_000 });
    expect(piped.stderr).toMatch(absent);
    expect(piped.stderr).toContain("[codeaction] reading wide.csv\n");
    expect(piped.stderr).not.toContain("rows, ");
    const quiet = await runCli([...args, "--quiet"], { cwd, timeoutMs: 200_000 });
    expect(quiet.stderr).toMatch(absent);
    expect(quiet.stderr).not.toContain("reading");
  }, 300_000);
});

describe("codeaction chat (real sandbox, a local OpenAI-compatible model fixture)", () => {
  it("a scripted three-question session: the third question is answered from the first answer", async () => {
    const cwd = await mkdtemp(join(folder, "chat-"));
    const q3 = 'q3 = [o for o in load_orders() if "2026-07-01" <= o["date"] <= "2026-09-30"]';
    const revenue = "sum(o['quantity'] * o['unit_price'] for o in rows)";
    const reply = (lines: string[]) => `\`\`\`python\n${lines.join("\n")}\n\`\`\``;
    const fixture = await startOpenAIFixture({
      replies: [
        reply([
          q3,
          "totals = {}",
          "for o in q3:",
          "    totals[o['region']] = totals.get(o['region'], 0) + o['quantity'] * o['unit_price']",
          'print("RESULT: " + max(totals, key=totals.get))',
        ]),
        reply([q3, 'print(f"RESULT: {len(q3)}")']),
        // Written by a model that read the first answer in the conversation it was sent.
        reply([
          q3,
          'rows = [o for o in q3 if o["region"] == "North America"]',
          `print(f"RESULT: {round(${revenue})}")`,
        ]),
      ],
    });
    try {
      const input = [
        "Which region had the highest revenue in Q3 2026?",
        "How many orders were there in Q3 2026?",
        "What was that region's revenue in Q3?",
        "/program",
        "/save session.json",
        "",
      ].join("\n");
      const run = await runCli(["chat", "--csv", orders, "--model", "openai:gpt-5-mini"], {
        cwd,
        input,
        env: { OPENAI_API_KEY: "fixture-key", OPENAI_BASE_URL: fixture.baseURL },
        timeoutMs: 280_000,
      });
      expect(run.exitCode, run.stderr).toBe(0);
      const answers = run.stdout.trim().split("\n");
      expect(answers).toHaveLength(3);
      expect(answers[0]).toBe("North America");
      // 166 of the 500 orders are dated July to September 2026.
      expect(answers[1]).toBe("166");
      expect(answers[2]).toBe("108664");
      // The third request carried the earlier questions and answers, each answer after its question
      // (the system prompt names every region: "North America" anywhere would prove nothing).
      const third = JSON.stringify(fixture.requests[2]?.body.messages);
      expect(third).toContain(
        JSON.stringify(
          "User: Which region had the highest revenue in Q3 2026?\nAssistant: North America\nUser: How many orders were there in Q3 2026?\nAssistant: 166\n",
        ).slice(1, -1),
      );
      expect(JSON.stringify(fixture.requests[0]?.body.messages)).not.toContain("How many orders");
      expect(run.stderr).toContain('rows = [o for o in q3 if o["region"] == "North America"]');
      const saved = JSON.parse(await readFile(join(cwd, "session.json"), "utf8")) as {
        turns: { question: string; answer: string }[];
      };
      expect(saved.turns.map((turn) => turn.answer)).toEqual(answers);
    } finally {
      await fixture.close();
    }
  }, 300_000);
});
