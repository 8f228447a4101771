import { readFileSync } from "node:fs";
import { type RunRecord, replayRun } from "@codeaction/core";
import { describe, expect, it } from "vitest";

// A run recorded once against live tools (record-fixture.ts), replayed as a deterministic test: the
// same program in a fresh sandbox, every tool call answered from the record, no model, no tool.
const record = JSON.parse(
  readFileSync(new URL("./top-customer.run.json", import.meta.url), "utf8"),
) as RunRecord;

describe("the top-customer program", () => {
  it("reproduces its recorded run: the same calls, the same RESULT", async () => {
    expect(await replayRun(record)).toMatchObject({ status: "reproduced", result: "ada 120", calls: 2 });
  });

  it("notices when the data it was recorded with changes", async () => {
    const changed = structuredClone(record);
    changed.callLog[1]!.result = '[{"amount":500,"status":"paid"}]';
    const report = await replayRun(changed);
    expect(report).toMatchObject({ status: "differs", kind: "result" });
  });
});
