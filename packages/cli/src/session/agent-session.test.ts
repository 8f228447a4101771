import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliContext } from "../context.ts";
import type { DataFileArgument } from "../data-files/data-formats.ts";
import { createProgress } from "../terminal/progress.ts";
import { openAgentSession } from "./agent-session.ts";
import { type ModelLoadOrder, planAgentSession } from "./session-plan.ts";

// Sessions of the tools pattern (no sandbox) over a replay: the model is the only thing faked.

let folder: string;
let context: CliContext;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-agent-session-"));
  await writeFile(join(folder, "replay.json"), JSON.stringify({ replies: ["RESULT: 1"] }));
  await writeFile(join(folder, "broken-replay.json"), "not a recording");
  await writeFile(join(folder, "small.csv"), "id,name\n1,Ada\n2,Grace\n");
  const stderr = process.stderr;
  context = { stdout: process.stdout, stderr, env: {}, cwd: folder };
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function open(options: { replay: string; files: DataFileArgument[]; modelLoad?: ModelLoadOrder }) {
  const plan = await planAgentSession({ replay: options.replay }, context, { command: "ask" });
  return openAgentSession(plan, context, {
    pattern: "tools",
    image: undefined,
    files: options.files,
    questions: "one",
    progress: createProgress({ stream: context.stderr, quiet: true }),
    modelCall: () => ({ retries: 0, timeoutSeconds: undefined }),
    onRetry: () => undefined,
    modelLoad: options.modelLoad ?? "beside-data",
  });
}

describe("an agent session", () => {
  it("types a big file from its head only: its rows are estimated from the typing sample, not counted", async () => {
    const path = join(folder, "big.csv");
    const row = "O-0000001,2026-07-01,EMEA,Team,3,99.0\n";
    const rows = Math.ceil((5 * 1024 * 1024) / row.length);
    await writeFile(path, `order_id,date,region,product,quantity,unit_price\n${row.repeat(rows)}`);
    const session = await open({ replay: "replay.json", files: [{ path, format: "csv" }] });
    try {
      const [table] = session.data.tables;
      expect(table?.sample?.rowCountEstimated).toBe(true);
      expect(table?.rowCount).toBe(rows);
      expect(session.data.tools[0]?.description).toContain(`(about ${rows.toLocaleString("en-US")} rows)`);
    } finally {
      await session.close();
    }
  });

  it("builds its agent once, and after close() builds none", async () => {
    const session = await open({ replay: "replay.json", files: [] });
    const agent = await session.build();
    expect(await session.build()).toBe(agent);
    expect(session.agent).toBe(agent);
    await Promise.all([session.close(), session.close()]);
    await expect(session.build()).rejects.toThrow("the agent session is closed");
  });

  it("reports a bad data file before a broken model, or the model first when it loads before the data", async () => {
    const files: DataFileArgument[] = [{ path: join(folder, "missing.csv"), format: "csv" }];
    const failure = (modelLoad: ModelLoadOrder) =>
      open({ replay: "broken-replay.json", files, modelLoad }).then(
        () => "opened",
        (error: Error) => error.message,
      );
    expect(await failure("beside-data")).toMatch(/missing\.csv.*no such file/);
    expect(await failure("after-data")).toMatch(/missing\.csv.*no such file/);
    expect(await failure("before-data")).toMatch(/broken-replay\.json is not a recording/);
  });
});
