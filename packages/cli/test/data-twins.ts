import { readFile, writeFile } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import { parse } from "csv-parse/sync";
import { parquetWriteBuffer } from "hyparquet-writer";
import writeExcelFile from "write-excel-file/node";

/** The extensions of the twins `writeTwins` makes. */
export type TwinFormat = "tsv" | "json" | "jsonl" | "xlsx" | "parquet";

type Cell = string | number | Date | null;

/**
 * The same table as a CSV in every other format `--file` reads, written by other libraries than the
 * ones that read them (Excel by write-excel-file, parquet by hyparquet-writer, in row groups of 200):
 * numbers as numbers, ISO dates as dates where the format has them. Returns each twin's path.
 */
export async function writeTwins(csvPath: string, folder: string): Promise<Record<TwinFormat, string>> {
  const [header, ...rows] = parse(await readFile(csvPath, "utf8")) as string[][];
  const names = header!;
  const typed: Cell[][] = rows.map((row) => row.map(typedCell));
  const stem = basename(csvPath, extname(csvPath));
  const path = (extension: TwinFormat) => join(folder, `${stem}.${extension}`);
  const records = typed.map((row) =>
    Object.fromEntries(names.map((name, index) => [name, jsonCell(row[index] ?? null)])),
  );
  await writeFile(path("tsv"), [names, ...rows].map((row) => row.join("\t")).join("\n"));
  await writeFile(path("json"), JSON.stringify(records, null, 1));
  await writeFile(path("jsonl"), `${records.map((record) => JSON.stringify(record)).join("\n")}\n`);
  await writeExcelFile(
    [names, ...typed].map((row) =>
      row.map((cell) => (cell instanceof Date ? { value: cell, type: Date, format: "yyyy-mm-dd" } : cell)),
    ) as never,
  ).toFile(path("xlsx"));
  const columnData = names.map((name, index) => ({ name, data: typed.map((row) => row[index] ?? null) }));
  await writeFile(path("parquet"), Buffer.from(parquetWriteBuffer({ columnData, rowGroupSize: 200 })));
  return {
    tsv: path("tsv"),
    json: path("json"),
    jsonl: path("jsonl"),
    xlsx: path("xlsx"),
    parquet: path("parquet"),
  };
}

function typedCell(text: string): Cell {
  if (text === "") return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return new Date(`${text}T00:00:00Z`);
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return text;
}

function jsonCell(cell: Cell): string | number | null {
  return cell instanceof Date ? cell.toISOString().slice(0, 10) : cell;
}
