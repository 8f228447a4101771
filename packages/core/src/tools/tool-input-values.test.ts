import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runLocally } from "../../test/local-relay.ts";
import { ConfigError } from "../errors/config-error.ts";
import { renderStubSignatures, renderStubsModule } from "../prompt/python-stubs.ts";
import { callTool } from "../tools-pattern/call-tool.ts";
import { fromLangChainTool } from "./from-langchain.ts";
import { valueMarker } from "./tool-input-values.ts";
import type { ToolSpec } from "./tool-spec.ts";
import { findUnknownKeys } from "./unknown-keys.ts";

// Dates and bigints in a tool's input: a program sends a datetime or a Python int, a tools-pattern
// model sends an ISO string or an integer (or its digits), and the tool gets a Date or a bigint,
// exactly. The tools below report what they received, with the types they received.
function recordingTool(name: string, schema: z.ZodObject) {
  const received: unknown[] = [];
  const recorder = tool(
    async (input) => {
      received.push(input);
      return "ok";
    },
    { name, description: `The ${name} tool.`, schema },
  );
  return { spec: fromLangChainTool(recorder), received };
}

/** One tools-pattern call, as the model would make it. */
function callWith(spec: ToolSpec, args: Record<string, unknown>) {
  return callTool({ id: "c", tool: spec, name: spec.name, args, runId: "r", availableTools: [spec.name] });
}

function ordersTool() {
  return recordingTool(
    "orders_since",
    z.object({
      window: z.object({
        since: z.date().describe("First moment counted"),
        until: z.coerce.date().optional(),
      }),
      ids: z.array(z.bigint()).optional(),
      account: z.bigint().optional(),
    }),
  );
}

describe("dates and bigints in a tool's input", () => {
  it("build, and the model and the stubs see an ISO date-time and an int (no internal marker)", () => {
    const { spec } = ordersTool();
    expect(JSON.stringify(spec.inputSchema)).not.toContain(valueMarker);
    const window = spec.inputSchema.properties?.window;
    expect(window?.properties?.since).toEqual({
      type: "string",
      format: "date-time",
      description: "First moment counted",
    });
    expect(spec.inputSchema.properties?.ids).toMatchObject({ type: "array", items: { type: "integer" } });
    const stub = renderStubSignatures([spec]);
    expect(stub).toContain("since (datetime.datetime | str, format: date-time): First moment counted.");
    expect(stub).toContain("ids: list[int] | None = None");
  });

  it("a program's datetime, date and ints past 2^53 reach the tool as Dates and exact bigints", async () => {
    const { spec, received } = ordersTool();
    const run = await runLocally({
      program: `
import datetime as dt
orders_since(
    window={"since": dt.datetime(2025, 3, 1, 9, 30, tzinfo=dt.timezone.utc), "until": dt.date(2025, 3, 31)},
    ids=[2**64 + 1, -(2**70), 7],
    account=12345678901234567890123,
)
orders_since(window={"since": dt.datetime(2025, 3, 1, 9, 30)})
print("RESULT: done")
`,
      stubsSource: renderStubsModule([spec]),
      tools: [spec],
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(received).toEqual([
      {
        window: { since: new Date("2025-03-01T09:30:00Z"), until: new Date("2025-03-31T00:00:00Z") },
        ids: [2n ** 64n + 1n, -(2n ** 70n), 7n],
        account: 12345678901234567890123n,
      },
      // A datetime without a time zone is read as UTC, whatever the host's zone.
      { window: { since: new Date("2025-03-01T09:30:00Z") } },
    ]);
    // The record keeps what the program sent, as JSON.
    expect(run.toolCalls[0]?.args).toMatchObject({
      window: { since: "2025-03-01T09:30:00+00:00", until: "2025-03-31" },
      ids: ["18446744073709551617", "-1180591620717411303424", 7],
    });
  });

  it("a tools-pattern model's ISO strings, integers and digit strings reach the tool the same way", async () => {
    const { spec, received } = ordersTool();
    const { record } = await callWith(spec, {
      window: { since: "2025-03-01T10:30:00+01:00" },
      ids: [5, "123456789012345678901"],
    });
    expect(record.status, record.error).toBe("ok");
    expect(received).toEqual([
      { window: { since: new Date("2025-03-01T09:30:00Z") }, ids: [5n, 123456789012345678901n] },
    ]);
  });

  it("a value that is no date or a rounded integer is refused naming the tool, the field and the fix", async () => {
    const { spec, received } = ordersTool();
    const ask = (args: Record<string, unknown>) => callWith(spec, args);
    const notADate = await ask({ window: { since: "last tuesday" } });
    expect(notADate.record.status).toBe("invalid");
    expect(notADate.content).toBe(
      "Error: Invalid input for tool 'orders_since': window.since: \"last tuesday\" is not an ISO 8601 date or date-time; pass a datetime.datetime, a datetime.date or a string such as '2025-03-01' or '2025-03-01T09:30:00Z'. Call it again with arguments that match its schema.",
    );
    const rounded = await ask({ window: { since: "2025-03-01" }, ids: [2 ** 60] });
    expect(rounded.record.status).toBe("invalid");
    expect(rounded.content).toContain(
      `ids[0]: ${2 ** 60} is past 2^53, so JSON may have rounded it; send the integer's digits as a string`,
    );
    const notAnInteger = await ask({ window: { since: "2025-03-01" }, account: "12a" });
    expect(notAnInteger.content).toContain(
      'account: "12a" is not an integer; pass an int (or a string of its digits)',
    );
    expect(received).toEqual([]);
  });

  it("types no program can send are refused at build time, naming the tool and each field", () => {
    const lookup = tool(async () => "", {
      name: "lookup",
      description: "Looks up.",
      schema: z.object({
        index: z.map(z.string(), z.number()),
        filter: z.object({ tags: z.set(z.string()) }),
      }),
    });
    let error: unknown;
    try {
      fromLangChainTool(lookup);
    } catch (thrown) {
      error = thrown;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toMatch(/^The tool 'lookup' has an argument a program cannot send: /);
    expect(message).toContain("'index' is a z.map()");
    expect(message).toContain("'filter.tags' is a z.set()");
    expect(message).toMatch(/Change its schema to JSON types \(.*dates and bigints work too\)\.$/);
  });
});

describe("objects that allow extra keys keep them", () => {
  const { spec, received } = recordingTool(
    "tag",
    z.object({
      labels: z.looseObject({ owner: z.string() }),
      extra: z.object({ team: z.string() }).passthrough(),
      closed: z.strictObject({ region: z.string() }),
      plain: z.object({ regions: z.array(z.string()) }),
    }),
  );
  const base = {
    labels: { owner: "ada" },
    extra: { team: "x" },
    closed: { region: "EU" },
    plain: { regions: [] },
  };

  it("z.looseObject and .passthrough() accept extra keys, and the tool gets them", async () => {
    const args = { ...base, labels: { owner: "ada", cost_center: "42" }, extra: { team: "x", floor: 3 } };
    expect(findUnknownKeys(spec.inputSchema, args)).toEqual([]);
    const { record } = await callWith(spec, args);
    expect(record.status, record.error).toBe("ok");
    expect(received.at(-1)).toEqual(args);
  });

  it("z.strictObject and plain objects refuse an unknown key with a did-you-mean", async () => {
    const args = { ...base, closed: { region: "EU", zone: "a" }, plain: { region: ["EU"] } };
    const { record, content } = await callWith(spec, args);
    expect(record.status).toBe("invalid");
    expect(content).toContain("closed.zone: unknown key; the keys are: region.");
    expect(content).toContain("plain.region: unknown key; did you mean 'regions'?");
  });
});
