import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { z } from "zod";

// LangChain tools as their authors would write them, for the stub-coverage measure: unions and
// discriminated unions, nested objects, enums, defaults, constraints, formats, dates, bigints and
// objects that allow extra keys. `run` is what every tool does when called (nothing, by default).

const noop = async () => null;

export function realisticTools(run: (input: unknown) => Promise<unknown> = noop): StructuredToolInterface[] {
  return [
    tool(run, {
      name: "search_orders",
      description: "Search orders",
      schema: z.object({
        query: z.string().min(1).max(200).describe("Words to find in the order notes"),
        filter: z
          .object({
            regions: z
              .array(z.enum(["EMEA", "APAC", "AMER"]))
              .min(1)
              .describe("Regions to include"),
            since: z.iso.date().optional().describe("First day, inclusive"),
            minTotal: z.number().nonnegative().optional(),
          })
          .optional(),
        limit: z.number().int().min(1).max(100).default(20).describe("Max rows"),
      }),
    }),
    tool(run, {
      name: "create_invoice",
      description: "Create an invoice for a customer.",
      schema: z.object({
        customerId: z
          .string()
          .regex(/^C-\d{4}$/)
          .describe("The customer's id"),
        lines: z
          .array(
            z.object({
              sku: z.string(),
              quantity: z.number().int().positive(),
              unitPrice: z.number().multipleOf(0.01),
            }),
          )
          .min(1)
          .max(50),
        payment: z.discriminatedUnion("method", [
          z.object({ method: z.literal("card"), last4: z.string().length(4) }),
          z.object({ method: z.literal("transfer"), iban: z.string().min(15).max(34) }),
          z.object({ method: z.literal("invoice"), dueDays: z.number().int().min(7).max(90) }),
        ]),
        currency: z.enum(["EUR", "USD", "GBP"]).default("EUR"),
      }),
    }),
    tool(run, {
      name: "send_email",
      description: "Send an email.",
      schema: z.object({
        to: z.array(z.email()).min(1).max(10),
        subject: z.string().max(120),
        body: z.string(),
        replyTo: z.email().optional(),
      }),
    }),
    tool(run, {
      name: "schedule_meeting",
      description: "Book a meeting room.",
      schema: z.object({
        start: z.iso.datetime().describe("Start, UTC"),
        minutes: z.number().int().min(15).max(480).multipleOf(15),
        attendees: z.array(z.string()).max(20).default([]),
        room: z.union([z.literal("any"), z.string().regex(/^R\d{3}$/)]).default("any"),
      }),
    }),
    tool(run, {
      name: "geocode",
      description: "Coordinates of a place.",
      schema: z.object({
        place: z.union([
          z.object({ address: z.string().min(3) }),
          z.object({ latitude: z.number().min(-90).max(90), longitude: z.number().min(-180).max(180) }),
        ]),
      }),
    }),
    tool(run, {
      name: "query_metrics",
      description: "Time series of a metric.",
      schema: z.object({
        metric: z.enum(["cpu", "memory", "latency_p99"]),
        window: z.object({ from: z.iso.datetime(), to: z.iso.datetime() }),
        step: z.number().int().positive().describe("Seconds between points"),
        tags: z.record(z.string(), z.string()).optional().describe("Exact tag matches"),
      }),
    }),
    tool(run, {
      name: "update_ticket",
      description: "Change a support ticket.",
      schema: z.object({
        id: z.number().int().positive(),
        status: z.enum(["open", "pending", "solved"]).optional(),
        priority: z.number().int().min(1).max(5).optional(),
        comment: z.object({ text: z.string().min(1), public: z.boolean().default(false) }).optional(),
      }),
    }),
    tool(run, {
      name: "convert_currency",
      description: "Convert an amount.",
      schema: z.object({
        amount: z.number().positive(),
        from: z.string().length(3).describe("ISO 4217 code"),
        to: z.string().length(3).describe("ISO 4217 code"),
      }),
    }),
    tool(run, {
      name: "list_files",
      description: "List files under a folder.",
      schema: z.object({
        folder: z.string().startsWith("/"),
        pattern: z.string().default("*"),
        depth: z.number().int().min(0).max(10).default(1),
        include: z
          .array(z.enum(["files", "folders", "links"]))
          .min(1)
          .default(["files"]),
      }),
    }),
    tool(run, {
      name: "run_report",
      description: "Run a saved report.",
      schema: z.object({
        report: z.string().uuid(),
        format: z.enum(["csv", "json"]).default("json"),
        parameters: z
          .array(z.object({ name: z.string(), value: z.union([z.string(), z.number(), z.boolean()]) }))
          .max(20)
          .optional(),
      }),
    }),
    tool(run, {
      name: "book_shipment",
      description: "Book a parcel pickup.",
      schema: z.object({
        pickupAt: z.date().describe("When the courier collects"),
        trackingNumber: z.bigint().optional().describe("The carrier's 20-digit number, if known"),
        destination: z.union([
          z.object({ locker: z.string().length(6).describe("Parcel locker code") }),
          z.object({ street: z.string(), city: z.string(), postcode: z.string().max(10) }),
        ]),
        labels: z
          .looseObject({ reference: z.string().optional() })
          .describe("Free-form labels for your records"),
      }),
    }),
  ];
}
