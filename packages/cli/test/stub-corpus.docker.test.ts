import { createProgramRunner, fromLangChainTool } from "@codeaction/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMemoryAndFilesystem } from "./reference-servers.ts";
import { realisticTools } from "./stub-corpus.ts";

// The stubs of the whole stub-coverage corpus (two reference MCP servers from npm and the LangChain
// tools, unions, dates and bigints among them), imported by a program in the real image: every
// function and TypedDict is valid Python 3.11, each TypedDict holds its variant's keys, and a call
// built from a TypedDict, a datetime and an int past 2^53 reaches the tool as a Date and a bigint.

let servers: Awaited<ReturnType<typeof connectMemoryAndFilesystem>> | undefined;
const received: unknown[] = [];

beforeAll(async () => {
  servers = await connectMemoryAndFilesystem();
}, 120_000);

afterAll(async () => {
  await servers?.close();
});

const program = `
import inspect, json, typing, datetime as dt
import codeaction_tools as tools
exported = {name: getattr(tools, name) for name in tools.__all__}
typed = {
    name: {"required": sorted(value.__required_keys__), "optional": sorted(value.__optional_keys__)}
    for name, value in exported.items() if typing.is_typeddict(value)
}
functions = sorted(name for name, value in exported.items() if inspect.isfunction(value))
book_shipment(
    pickupAt=dt.datetime(2025, 3, 1, 9, 30),
    trackingNumber=12345678901234567890123,
    destination=BookShipmentDestinationVariant1(locker="L-0017"),
    labels={"reference": "PO-1", "cost_center": "42"},
)
print("RESULT:", json.dumps({"typed": typed, "functions": functions}))
`;

describe("the corpus's stubs in the real image", () => {
  it("import as valid Python; TypedDicts hold each variant's keys; dates and bigints arrive as they are", async () => {
    const ownTools = realisticTools(async (input) => {
      received.push(input);
      return "booked";
    }).map((tool) => fromLangChainTool(tool));
    const tools = [...(servers?.tools ?? []), ...ownTools];
    const runner = await createProgramRunner({ tools });
    try {
      const run = await runner.run(program);
      expect(run.status, run.stderr).toBe("ok");
      const { typed, functions } = JSON.parse(run.result ?? "null") as {
        typed: Record<string, { required: string[]; optional: string[] }>;
        functions: string[];
      };
      expect(functions).toHaveLength(tools.length);
      expect(typed).toMatchObject({
        CreateInvoicePaymentCard: { required: ["last4", "method"], optional: [] },
        CreateInvoicePaymentTransfer: { required: ["iban", "method"], optional: [] },
        CreateInvoicePaymentInvoice: { required: ["dueDays", "method"], optional: [] },
        BookShipmentDestinationVariant1: { required: ["locker"], optional: [] },
        BookShipmentDestinationVariant2: { required: ["city", "postcode", "street"], optional: [] },
      });
      expect(received).toEqual([
        {
          pickupAt: new Date("2025-03-01T09:30:00Z"),
          trackingNumber: 12345678901234567890123n,
          destination: { locker: "L-0017" },
          labels: { reference: "PO-1", cost_center: "42" },
        },
      ]);
    } finally {
      await runner.close();
    }
  });
});
