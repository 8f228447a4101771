import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CsvInputError } from "../errors/csv-input-error.ts";
import { scanCsv } from "./csv-table.ts";
import { NotPlainError, plainHead } from "./plain-head.ts";
import type { Delimiter } from "./sniff-delimiter.ts";
import type { SourceRecord } from "./source-record.ts";
import { readRecords } from "./table-records.ts";

let folder: string;
let files = 0;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-plain-head-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function fileOf(content: string | Buffer): Promise<string> {
  files += 1;
  const path = join(folder, `file-${files}.csv`);
  await writeFile(path, content);
  return path;
}

/** What a scan takes of each record: its cells, line and end byte. */
const seen = ({ record, line, endByte }: SourceRecord) => ({ record, line, endByte });

/** csv-parse's records (table-records.ts), up to and with the first whose end reaches `sampleBytes`. */
async function parsed(path: string, delimiter: Delimiter, sampleBytes: number) {
  const records: ReturnType<typeof seen>[] = [];
  for await (const record of readRecords({ file: path, format: "csv", delimiter })) {
    records.push(seen(record));
    if ((record.endByte ?? 0) >= sampleBytes) break;
  }
  return records;
}

async function plain(path: string, delimiter: Delimiter, sampleBytes: number) {
  const records = await plainHead(path, { delimiter, sampleBytes });
  return records ? [...records].map(seen) : undefined;
}

describe("plainHead: a head without quotes split by hand, as csv-parse reads it", () => {
  const cases: [string, string | Buffer, Delimiter][] = [
    ["\\n endings, a last line without one", "a,b,c\n1,2,3\n4,,6\n7,8,9", ","],
    ["\\r\\n endings and a BOM", "\uFEFFname;city\r\nAda;Zürich\r\n\r\nBob;Paris\r\n", ";"],
    ["blank lines (skipped, yet counted in the line numbers)", "a\tb\n\n1\t2\n\n\n3\t4\n", "\t"],
    ["multibyte text (end bytes, not characters)", "ville|prix\nZürich|1\n東京|2\nSão Paulo|3\n", "|"],
    ["cells of blanks and spaces", "a,b\n , \n,\n", ","],
  ];
  for (const [name, content, delimiter] of cases) {
    it(`gives csv-parse's cells, lines and end bytes: ${name}`, async () => {
      const path = await fileOf(content);
      const size = Buffer.byteLength(content);
      expect(await plain(path, delimiter, size)).toEqual(await parsed(path, delimiter, size));
    });
  }

  it("stops at the record that crosses the sample's end, as the scan does", async () => {
    const rows = Array.from({ length: 2_000 }, (_, index) => `${index},row ${index},${index * 0.5}`);
    const content = `id,label,value\n${rows.join("\n")}\n`;
    const path = await fileOf(content);
    for (const sampleBytes of [1_000, 1_024, 1_025, 20_000]) {
      const records = await plain(path, ",", sampleBytes);
      expect(records).toEqual(await parsed(path, ",", sampleBytes));
      expect(records?.at(-1)?.endByte).toBeGreaterThanOrEqual(sampleBytes);
      expect(records?.at(-2)?.endByte).toBeLessThan(sampleBytes);
    }
  });

  it("leaves to csv-parse a head with a quote, a lone \\r, mixed endings, or a record past its lookahead", async () => {
    const longRecord = `a,b\n1,${"x".repeat(100_000)}\n2,3\n`;
    for (const content of ['a,b\n"1",2\n', "a,b\r1,2\r", "a,b\r\n1,2\n3,4\r\n", longRecord]) {
      const path = await fileOf(content);
      expect(await plainHead(path, { delimiter: ",", sampleBytes: 8 })).toBeUndefined();
    }
  });

  it("throws NotPlainError at a row whose field count is not the header's", async () => {
    const records = await plainHead(await fileOf("a,b\n1,2\n3\n"), { delimiter: ",", sampleBytes: 10 });
    expect(() => [...(records ?? [])]).toThrow(NotPlainError);
  });
});

describe("scanCsv over a plain head", () => {
  it("types a big file's sample as csv-parse's records type it (the same table)", async () => {
    const regions = ["North", "South", "East", "West"];
    const rows = Array.from(
      { length: 30_000 },
      (_, index) =>
        `O-${index},2026-0${1 + (index % 9)}-1${index % 10},${regions[index % 4]},${index % 17},${index % 3 === 0 ? "" : `${index}.5`}`,
    );
    const header = "id,date,region,quantity,price\n";
    const content = `${header}${rows.join("\n")}\n`;
    // The same file with its first name quoted: csv-parse reads it all, each record 2 bytes later.
    const quoted = content.replace("id,date", '"id",date');
    // Just past the end of row 5,000 (in both files): both samples stop at row 5,001.
    const sampleBytes = Buffer.byteLength(header + rows.slice(0, 5_000).join("\n")) + 1 + 3;
    const table = await scanCsv(await fileOf(content), { sampleBytes, rowCount: "estimated" });
    // The same file with one quote in its header: csv-parse reads it all.
    const reference = await scanCsv(await fileOf(quoted), { sampleBytes, rowCount: "estimated" });
    const { file: _file, name: _name, sizeBytes: _size, ...typed } = table;
    const { file: _reference, name: _referenceName, sizeBytes: _referenceSize, ...expected } = reference;
    expect(table.sample?.rows).toBe(5_001);
    expect({ ...typed, sample: { ...typed.sample, bytes: 0 } }).toEqual({
      ...expected,
      sample: { ...expected.sample, bytes: 0 },
    });
    expect(table.sample?.bytes).toBe((reference.sample?.bytes ?? 0) - 2);
  });

  it("reports a ragged row as csv-parse does: its line and field counts", async () => {
    const path = await fileOf("a,b\n1,2\n\n3\n4,5\n");
    const error = await scanCsv(path).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(CsvInputError.isInstance(error)).toBe(true);
    expect((error as CsvInputError).line).toBe(4);
    expect((error as CsvInputError).problem).toContain("the row has 1 fields but the header has 2");
  });
});
