import { describe, expect, it } from "vitest";
import type { CsvTable } from "../../data-files/csv-table.ts";
import { describeFailedPrograms, lastErrorLine } from "./desk-failure.ts";

const traceback = [
  "Traceback (most recent call last):",
  '  File "/workspace/.codeaction/program.py", line 2, in <module>',
  '    print(rows[0]["price"])',
  "          ~~~~~~~^^^^^^^^^",
  "KeyError: 'price'",
  "",
].join("\n");
const orders = {
  file: "/data/orders.csv",
  columns: [{ name: "order_id" }, { name: "unit_price" }],
} as CsvTable;

describe("a failed question in an analyst's words (issue 43 #8)", () => {
  it("finds the line that names the error at the end of a traceback, and none without one", () => {
    expect(lastErrorLine(`some output\n${traceback}`)).toBe("KeyError: 'price'");
    expect(
      lastErrorLine("Traceback (most recent call last):\n  x\npandas.errors.EmptyDataError: No columns"),
    ).toBe("pandas.errors.EmptyDataError: No columns");
    expect(lastErrorLine("no traceback here\nValueError: printed, not raised")).toBeUndefined();
  });

  it("names the columns each file has on a KeyError, and no library advice", () => {
    const described = describeFailedPrograms({ attempts: [{ stderr: traceback }, { stderr: traceback }] }, [
      orders,
    ]);
    expect(described).toEqual({
      message:
        "The analysis did not work: the model wrote a program 2 times and each one failed. The last one stopped with: KeyError: 'price'",
      errorLine: "KeyError: 'price'",
      fix: 'There is no column named "price". orders.csv has order_id, unit_price. Ask again using one of these names.',
    });
  });

  it("asks for more on any other failure", () => {
    const described = describeFailedPrograms({ attempts: [{ stdout: "", stderr: "killed" }] }, [orders]);
    expect(described.message).toBe("The analysis did not work: the program the model wrote failed.");
    expect(described.fix).toMatch(/^Ask again saying more/);
  });
});
