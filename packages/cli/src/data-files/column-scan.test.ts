import { describe, expect, it } from "vitest";
import { ColumnScan } from "./column-scan.ts";

/** A scan of `rows` under the header `names`. */
function scanOf(names: string[], rows: string[][]) {
  const scan = new ColumnScan(names);
  for (const row of rows) scan.add(row);
  return scan.columns();
}

describe("ColumnScan: the cells left to read once a column is settled", () => {
  const many = Array.from({ length: 20 }, (_, index) => index);

  it("a str column past its categories still learns of a blank cell", () => {
    const rows = [...many.map((index) => [`id-${index}`]), [" "], ["id-99"]];
    expect(scanOf(["id"], rows)).toEqual([{ name: "id", type: "str", hasEmpty: true }]);
  });

  it("a date column past its categories still learns of a cell that is not a date", () => {
    const dates = many.map((index) => [`2026-01-${String(index + 1).padStart(2, "0")}`]);
    expect(scanOf(["day"], dates)).toEqual([{ name: "day", type: "str", hasEmpty: false, isoDates: true }]);
    expect(scanOf(["day"], [...dates, ["2026-01-02"], ["soon"]])).toEqual([
      { name: "day", type: "str", hasEmpty: false },
    ]);
  });

  it("a category's repeated values change nothing; a new one that is not a number makes it str", () => {
    const repeated = many.map((index) => [String(index % 3)]);
    expect(scanOf(["level"], repeated)).toEqual([{ name: "level", type: "int", hasEmpty: false }]);
    expect(scanOf(["level"], [...repeated, ["high"], ["1"]])).toEqual([
      { name: "level", type: "str", hasEmpty: false, categories: ["0", "1", "2", "high"] },
    ]);
  });
});
