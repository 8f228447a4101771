import { describe, expect, it } from "vitest";
import { parseRecords } from "./output-listing.ts";
import { HostPaths } from "./output-names.ts";

const limits = { maxFileBytes: 10, maxTotalBytes: 15, maxFiles: 2 };
const hex = (text: string) => Buffer.from(text).toString("hex");
const line = (record: unknown) => `${JSON.stringify(record)}\n`;
const end = line({ type: "end", entries: 3, folders: 0, refused: 1 });

describe("parseRecords (the collector's output, checked on the host)", () => {
  it("reads files with their exact bytes, refusals, and the end", () => {
    const output = Buffer.from(
      line({ type: "file", parts: [hex("a.txt")], size: 3 }) +
        "abc" +
        line({ type: "refused", parts: [hex("link")], kind: "link" }) +
        end,
    );
    const listing = parseRecords(output, limits);
    expect(listing.end).toEqual({ entries: 3, folders: 0, refused: 1 });
    expect(listing.records).toEqual([
      { type: "file", parts: [Buffer.from("a.txt")], content: Buffer.from("abc") },
      { type: "refused", parts: [Buffer.from("link")], kind: "link" },
    ]);
  });

  it.each([
    ["a file over the per-file limit", line({ type: "file", parts: [hex("a")], size: 11 }) + "x".repeat(11)],
    [
      "files over the total",
      `${line({ type: "file", parts: [hex("a")], size: 8 })}${"x".repeat(8)}${line({ type: "file", parts: [hex("b")], size: 8 })}${"x".repeat(8)}`,
    ],
    ["a name with a slash", line({ type: "file", parts: [hex("a/b")], size: 0 })],
    ["a name that is ..", line({ type: "file", parts: [hex("..")], size: 0 })],
    ["a name that is not hex", line({ type: "file", parts: ["zz"], size: 0 })],
    ["fewer bytes than announced", `${line({ type: "file", parts: [hex("a")], size: 5 })}abc`],
    ["a line that is not JSON", "not json\n"],
  ])("stops at %s (malformed) and keeps nothing after it", (_, text) => {
    const listing = parseRecords(Buffer.from(text + end), limits);
    expect(listing.end.stopped).toBe("malformed");
    expect(listing.records.filter((record) => record.type === "file").length).toBeLessThanOrEqual(1);
  });

  it("says the collection did not finish when the end record is missing", () => {
    const listing = parseRecords(
      Buffer.from(line({ type: "refused", parts: [hex("x")], kind: "link" })),
      limits,
    );
    expect(listing.end.stopped).toBe("unfinished");
    expect(listing.records).toHaveLength(1);
  });
});

describe("HostPaths (unique host paths, compared without case)", () => {
  it("keeps a file and a folder that sanitise to one name apart, and one folder's files together", () => {
    const paths = new HostPaths();
    const parts = (...names: string[]) => names.map((name) => Buffer.from(name));
    expect(paths.fileName(parts("a?"))).toBe("a_");
    expect(paths.fileName(parts("a_", "b.txt"))).toBe("a_-2/b.txt");
    expect(paths.fileName(parts("a_", "c.txt"))).toBe("a_-2/c.txt");
    expect(paths.fileName(parts("A_-2"))).toBe("A_-2-2");
    expect(paths.fileName(parts("Data.csv"))).toBe("Data.csv");
    expect(paths.fileName(parts("data.csv"))).toBe("data-2.csv");
    expect(paths.fileName([Buffer.from([0xff, 0x2e, 0x74])])).toBe("_xff.t");
  });
});
