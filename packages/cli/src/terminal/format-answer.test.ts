// Measured with string-width itself, not our wrapper of it, so a broken wrapper fails here.
import displayWidth from "string-width";
import { describe, expect, it } from "vitest";
import { formatAnswer } from "./format-answer.ts";

const regions = JSON.stringify([
  { region: "North America", revenue: 108664.5 },
  { region: "LATAM", revenue: 81328 },
  { region: "EMEA", revenue: 7689.25 },
]);

describe("formatAnswer", () => {
  it("lays records out as an aligned table: numbers right-aligned with one number of decimals", () => {
    expect(formatAnswer(regions, "table")).toBe(
      [
        "region            revenue",
        "─────────────  ──────────",
        "North America  108,664.50",
        "LATAM           81,328.00",
        "EMEA             7,689.25",
        "",
      ].join("\n"),
    );
  });

  it("cuts long cells with a marker and escapes control characters in cells", () => {
    const long = "x".repeat(100);
    const table = formatAnswer(JSON.stringify([{ note: long }, { note: "a\nb\u001b]0;t\u0007" }]), "table");
    const lines = table.trimEnd().split("\n");
    expect(lines[2]).toBe(`${"x".repeat(39)}…`);
    expect(lines[3]).toBe("a\\x0ab\\x1b]0;t\\x07");
    expect(table).not.toContain("\u001b");
  });

  it("lines up columns of wide characters by the columns they take on a terminal, not code points", () => {
    const cities = JSON.stringify([
      { city: "東京", people: 14 },
      { city: "Lyon", people: 1 },
      { city: "👩‍🔬 lab", people: 3 },
    ]);
    const lines = formatAnswer(cities, "table").trimEnd().split("\n");
    // "東京" and "👩‍🔬" take two columns each: every line ends at the same terminal column.
    const widths = lines.map((line) => displayWidth(line));
    expect(new Set(widths).size).toBe(1);
    expect(lines[2]).toBe("東京        14");
    // A cell of wide characters is cut at 40 columns, not 40 characters.
    const long = formatAnswer(JSON.stringify([{ note: "語".repeat(30) }]), "table").split("\n")[2]!;
    expect(displayWidth(long)).toBeLessThanOrEqual(40);
    expect(long.endsWith("…")).toBe(true);
  });

  it("shows a dict as key/value lines and a scalar as itself", () => {
    expect(formatAnswer('{"total": 332704, "regions": 4, "best": "North America"}', "table")).toBe(
      "total:    332,704\nregions:  4\nbest:     North America\n",
    );
    expect(formatAnswer("332704.5", "table")).toBe("332704.5\n");
    expect(formatAnswer("not json, just words", "table")).toBe("not json, just words\n");
    expect(formatAnswer("[1, 2.5]", "table")).toBe("value\n─────\n  1.0\n  2.5\n");
  });

  it("prints csv, json and the raw text", () => {
    expect(formatAnswer(regions, "csv")).toBe(
      "region,revenue\nNorth America,108664.5\nLATAM,81328\nEMEA,7689.25\n",
    );
    expect(formatAnswer('{"a": "x,y", "b": true}', "csv")).toBe('key,value\na,"x,y"\nb,true\n');
    expect(JSON.parse(formatAnswer(regions, "json"))).toEqual(JSON.parse(regions));
    expect(formatAnswer('[{"a": 1}]', "text")).toBe('[{"a": 1}]\n');
  });
});
