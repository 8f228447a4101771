// Data files that expand far past their size on the host (issue 45 #3), built with the libraries the
// project uses: write-excel-file for a workbook's plain entries, fflate to read them back, node:zlib
// for the repeated deflate blocks, hyparquet-writer for a dictionary-encoded parquet file. Used by
// data-file-bounds.test.ts and the bench's "uploads" section.
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { constants, crc32, deflateRawSync } from "node:zlib";
import { unzipSync } from "fflate";
import { parquetWriteBuffer } from "hyparquet-writer";
import writeExcelFile from "write-excel-file/node";

/** A plain workbook of 50 rows (a warm-up read before a hostile one). */
export async function smallWorkbook(folder: string): Promise<string> {
  const path = join(folder, "small.xlsx");
  await writeExcelFile([
    ["name", "amount"],
    ...Array.from({ length: 50 }, (_, row) => [`n${row}`, row]),
  ] as never).toFile(path);
  return path;
}

/** A plain parquet file of two rows (a warm-up read before a hostile one). */
export async function smallParquet(folder: string): Promise<string> {
  const path = join(folder, "small.parquet");
  const columnData = [{ name: "note", data: ["a", "b"], type: "STRING" as const }];
  await writeFile(path, new Uint8Array(parquetWriteBuffer({ columnData })));
  return path;
}

/** A zip entry to write: its text as pieces, each repeated `times` (the zip holds each piece's deflate once per repeat). */
type Entry = { name: string; parts: Array<{ text: string | Uint8Array; times?: number }> };

/**
 * A workbook whose sheet1.xml unpacks to about `sheetMebibytes` MiB from a few MiB of zip (the
 * issue's 3.1 MB file unpacked to 3 GiB): one block of rows deflated once and its bytes repeated.
 */
export async function zipBombWorkbook(folder: string, sheetMebibytes = 1024): Promise<string> {
  const row = `<row><c t="inlineStr"><is><t>${"0".repeat(200)}</t></is></c></row>`;
  const block = row.repeat(Math.floor((1024 * 1024) / row.length));
  return writeWorkbook(join(folder, "bomb.xlsx"), [
    sheetEntry("xl/worksheets/sheet1.xml", block, sheetMebibytes),
  ]);
}

/**
 * A workbook of long strings: shared strings and two sheets, each under the per-entry limit, that
 * together unpack to about `3 x entryMebibytes` MiB (the 2.2 MB sheet of long strings took +1.18 GB).
 */
export async function longStringWorkbook(folder: string, entryMebibytes = 56): Promise<string> {
  const text = "long string ".repeat(4096);
  const strings = `<si><t>${text}</t></si>`.repeat(Math.floor((1024 * 1024) / (text.length + 13)));
  const count = Math.floor((1024 * 1024) / (text.length + 13)) * entryMebibytes;
  const cells = `<row><c t="s"><v>0</v></c></row>`.repeat(32 * 1024);
  return writeWorkbook(join(folder, "long-strings.xlsx"), [
    {
      name: "xl/sharedStrings.xml",
      parts: [
        {
          text: `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${count}" uniqueCount="${count}">`,
        },
        { text: strings, times: entryMebibytes },
        { text: "</sst>" },
      ],
    },
    sheetEntry("xl/worksheets/sheet1.xml", cells, entryMebibytes),
    sheetEntry("xl/worksheets/sheet2.xml", cells, entryMebibytes),
  ]);
}

/**
 * A parquet file of a few KiB whose one string column repeats a `valueCharacters`-long value for
 * `rows` rows in one row group (dictionary-encoded): `rows x valueCharacters` of CSV text.
 */
export async function dictionaryParquet(
  folder: string,
  options: { rows?: number; valueCharacters?: number } = {},
): Promise<string> {
  const { rows = 400_000, valueCharacters = 4096 } = options;
  const value = "x".repeat(valueCharacters);
  const buffer = parquetWriteBuffer({
    columnData: [{ name: "note", data: new Array<string>(rows).fill(value), type: "STRING" }],
    rowGroupSize: rows,
  });
  const path = join(folder, "dictionary.parquet");
  await writeFile(path, new Uint8Array(buffer));
  return path;
}

function sheetEntry(name: string, rows: string, mebibytes: number): Entry {
  const blockMebibytes = Buffer.byteLength(rows) / 1024 ** 2;
  return {
    name,
    parts: [
      {
        text: `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`,
      },
      { text: rows, times: Math.ceil(mebibytes / blockMebibytes) },
      { text: "</sheetData></worksheet>" },
    ],
  };
}

/** A valid one-sheet workbook from write-excel-file with `entries` put in place of (or beside) its own. */
async function writeWorkbook(path: string, entries: Entry[]): Promise<string> {
  const base = `${path}.base.xlsx`;
  await writeExcelFile([["a"]] as never).toFile(base);
  const plain = unzipSync(new Uint8Array(await readFile(base)));
  await rm(base);
  const replaced = new Set(entries.map((entry) => entry.name));
  const all: Entry[] = [
    ...Object.entries(plain)
      .filter(([name]) => !replaced.has(name))
      .map(([name, bytes]) => ({ name, parts: [{ text: bytes }] })),
    ...entries,
  ];
  await writeFile(path, zipOf(all));
  return path;
}

/**
 * A zip of deflated entries. Each piece is deflated on its own ending in a full flush (no
 * reference reaches back past it), so its bytes can be repeated; an empty final block ends the entry.
 */
function zipOf(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const data: Buffer[] = [];
    let crc = 0;
    let size = 0;
    for (const part of entry.parts) {
      const bytes = typeof part.text === "string" ? Buffer.from(part.text) : Buffer.from(part.text);
      const deflated = deflateRawSync(bytes, { finishFlush: constants.Z_FULL_FLUSH });
      for (let time = 0; time < (part.times ?? 1); time += 1) {
        data.push(deflated);
        crc = crc32(bytes, crc);
        size += bytes.length;
      }
    }
    data.push(deflateRawSync(Buffer.alloc(0)));
    const compressed = data.reduce((total, chunk) => total + chunk.length, 0);
    const local = header(0x04034b50, { crc, compressed, size, name });
    locals.push(local, ...data);
    central.push(header(0x02014b50, { crc, compressed, size, name, offset }));
    offset += local.length + compressed;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

function header(
  signature: number,
  fields: { crc: number; compressed: number; size: number; name: Buffer; offset?: number },
): Buffer {
  const isCentral = fields.offset !== undefined;
  const fixed = Buffer.alloc(isCentral ? 46 : 30);
  let at = 0;
  fixed.writeUInt32LE(signature, at);
  at += 4;
  if (isCentral) {
    fixed.writeUInt16LE(20, at);
    at += 2;
  }
  fixed.writeUInt16LE(20, at); // version needed
  fixed.writeUInt16LE(0, at + 2); // flags
  fixed.writeUInt16LE(8, at + 4); // deflate
  fixed.writeUInt32LE(0, at + 6); // time and date
  fixed.writeUInt32LE(fields.crc >>> 0, at + 10);
  fixed.writeUInt32LE(fields.compressed, at + 14);
  fixed.writeUInt32LE(fields.size, at + 18);
  fixed.writeUInt16LE(fields.name.length, at + 22);
  if (isCentral) fixed.writeUInt32LE(fields.offset ?? 0, 42);
  return Buffer.concat([fixed, fields.name]);
}
