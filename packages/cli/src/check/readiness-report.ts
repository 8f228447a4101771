import type { ToolSpec } from "@codeaction/core";
import { buildStubs } from "@codeaction/core/stubs";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { type CheckedCall, checkErrorCall, checkExampleCall, exampleArguments } from "./call-checks.ts";
import { type Finding, staticFindings } from "./static-checks.ts";

export type Verdict = "ready" | "needs work" | "broken";

export type ToolReport = {
  server: string;
  tool: string;
  function: string;
  verdict: Verdict;
  findings: Finding[];
  calls: CheckedCall[];
};

/**
 * Checks every tool as a program will meet it; with `call`, also calls the tools the schema (or
 * `givenArguments`) gives example arguments for, then once more with a wrongly typed argument.
 * Calls run one at a time, in the tools' order.
 */
export async function checkTools(
  tools: ToolSpec[],
  options: { call: boolean; givenArguments: Map<string, Record<string, unknown>> },
): Promise<ToolReport[]> {
  const stubs = buildStubs(tools);
  const reports: ToolReport[] = [];
  for (const [index, tool] of tools.entries()) {
    const stub = stubs[index]!;
    const findings = staticFindings(tool, stub);
    const calls: CheckedCall[] = [];
    if (options.call) {
      const args =
        options.givenArguments.get(tool.name) ??
        options.givenArguments.get(stub.functionName) ??
        exampleArguments(tool.inputSchema);
      if (args === undefined) {
        findings.push({
          check: "call",
          severity: "note",
          message: "not called: the schema gives no example arguments",
          fix: `add "examples" to the inputSchema, or pass --args '${tool.name}={...}'`,
        });
      } else {
        const example = await checkExampleCall(tool, args);
        calls.push(example.call);
        findings.push(...example.findings);
        const error = await checkErrorCall(tool);
        if (error.call) calls.push(error.call);
        findings.push(...error.findings);
      }
    }
    reports.push({
      server: tool.origin.replace(/^mcp:/, ""),
      tool: tool.name,
      function: stub.functionName,
      verdict: verdictOf(findings),
      findings,
      calls,
    });
  }
  return reports;
}

function verdictOf(findings: Finding[]): Verdict {
  if (findings.some((finding) => finding.severity === "error")) return "broken";
  if (findings.some((finding) => finding.severity === "warning")) return "needs work";
  return "ready";
}

const marks: Record<Finding["severity"], string> = { error: "✗", warning: "!", note: "·" };

/** The table, one row per tool, then each tool's findings with their fixes and the calls made. */
export function renderReport(reports: ToolReport[]): string {
  const rows = [
    ["TOOL", "PYTHON", "VERDICT", "FINDINGS"],
    ...reports.map((report) => [
      report.tool,
      report.function,
      report.verdict,
      [...new Set(report.findings.filter((f) => f.severity !== "note").map((f) => f.check))].join(", ") ||
        "-",
    ]),
  ].map((row) => row.map((cell) => escapeForTerminal(cell, { keepNewlines: false })));
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const table = rows.map((row) =>
    row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  "),
  );
  const details = reports
    .filter((report) => report.findings.length > 0 || report.calls.length > 0)
    .map((report) => {
      const lines = [`${report.tool} (${report.verdict})`];
      for (const finding of report.findings) {
        lines.push(`  ${marks[finding.severity]} ${finding.check}: ${finding.message}`);
        if (finding.fix) lines.push(`    fix: ${finding.fix}`);
      }
      for (const call of report.calls) {
        lines.push(
          `  called (${call.kind}) ${JSON.stringify(call.arguments)} -> ${call.outcome}: ${call.preview.slice(0, 300)}`,
        );
      }
      return escapeForTerminal(lines.join("\n"));
    });
  const counts = (["ready", "needs work", "broken"] as const)
    .map((verdict) => `${reports.filter((report) => report.verdict === verdict).length} ${verdict}`)
    .join(", ");
  return [
    `${reports.length} tools: ${counts}`,
    "",
    ...table,
    "",
    ...details.flatMap((detail) => [detail, ""]),
  ]
    .join("\n")
    .trimEnd();
}
