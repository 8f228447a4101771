import type { StructuredToolInterface } from "@langchain/core/tools";
import { type CsvTable, scanCsv } from "./csv-table.ts";
import { csvTool } from "./csv-tool.ts";

/** Scans every `--csv` file (one after the other, each as a stream) and makes one loader tool per file. */
export async function loadCsvTools(
  files: string[],
  options: { onFile?: (file: string) => void } = {},
): Promise<{ tables: CsvTable[]; tools: StructuredToolInterface[] }> {
  const tables: CsvTable[] = [];
  const tools: StructuredToolInterface[] = [];
  const taken = new Set<string>();
  for (const file of files) {
    options.onFile?.(file);
    const table = await scanCsv(file);
    let name = `load_${table.name}`;
    for (let index = 2; taken.has(name); index += 1) name = `load_${table.name}_${index}`;
    taken.add(name);
    tables.push(table);
    tools.push(csvTool(table, { name }));
  }
  return { tables, tools };
}
