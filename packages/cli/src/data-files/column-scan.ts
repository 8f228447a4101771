// The columns of a data file, found one record at a time as a scan reads it: each one's type,
// categories, ISO dates and blanks, and the header's names made unique.
import { CsvInputError } from "../errors/csv-input-error.ts";
import { type ColumnType, classifyCell, widenType } from "./column-types.ts";

export type CsvColumn = {
  name: string;
  type: ColumnType;
  /** Every distinct value of a str column when there are few of them (a category), else undefined. */
  categories?: string[];
  /** True when every value of a str column is an ISO date (YYYY-MM-DD). */
  isoDates?: boolean;
  /** True when at least one cell is blank (null in the rows). */
  hasEmpty: boolean;
};

const maxCategories = 12;
const maxCategoryLength = 40;
const isoDatePattern = /^\d{4}-\d{2}-\d{2}$/;

/** Every column's type, categories, dates and blanks, from one cell at a time. */
export class ColumnScan {
  rowCount = 0;
  /** About how many bytes the rows take as CSV text. */
  textBytes = 0;
  private types: ColumnType[];
  private categories: (Set<string> | undefined)[];
  private isoDates: boolean[];
  private hasEmpty: boolean[];
  /** True once a cell held a line break (a quoted one: the record spans lines). */
  sawLineBreak = false;

  readonly header: string[];
  private declaredTypes: ColumnType[] | undefined;

  constructor(header: string[], declaredTypes?: ColumnType[]) {
    this.header = header;
    this.declaredTypes = declaredTypes;
    this.types = header.map(() => "empty");
    this.categories = header.map(() => new Set<string>());
    this.isoDates = header.map(() => true);
    this.hasEmpty = header.map(() => false);
  }

  add(record: string[]): void {
    this.rowCount += 1;
    this.textBytes += record.length;
    for (let index = 0; index < record.length; index += 1) {
      const cell = record[index]!;
      this.textBytes += cell.length;
      if (!this.sawLineBreak && cell.includes("\n")) this.sawLineBreak = true;
      const seen = this.categories[index];
      // A value seen before changes nothing (its type and date form are counted, it is a category).
      if (seen?.has(cell)) continue;
      if (this.types[index] === "str" && !seen) {
        this.addToText(index, cell);
        continue;
      }
      const cellType = classifyCell(cell);
      if (cellType === "empty") {
        this.hasEmpty[index] = true;
        continue;
      }
      this.types[index] = widenType(this.types[index]!, cellType);
      if (seen && cell.length <= maxCategoryLength) {
        seen.add(cell);
        if (seen.size > maxCategories) this.categories[index] = undefined;
      } else if (seen) {
        this.categories[index] = undefined;
      }
      if (this.isoDates[index] && !isoDatePattern.test(cell)) this.isoDates[index] = false;
    }
  }

  /**
   * A cell of a column already typed str with too many values for a category: only its blank and
   * its date form are left to learn (a str column stays str whatever the cell holds).
   */
  private addToText(index: number, cell: string): void {
    if (cell.trim() === "") this.hasEmpty[index] = true;
    else if (this.isoDates[index] && !isoDatePattern.test(cell)) this.isoDates[index] = false;
  }

  columns(): CsvColumn[] {
    return this.header.map((name, index): CsvColumn => {
      const type = withDeclaredType(this.types[index]!, this.declaredTypes?.[index]);
      const column: CsvColumn = { name, type, hasEmpty: this.hasEmpty[index]! };
      if (type === "str") {
        const values = this.categories[index];
        if (values && this.rowCount > values.size) column.categories = [...values].sort();
        if (this.isoDates[index]) column.isoDates = true;
      }
      return column;
    });
  }
}

/**
 * A column's type from its values, corrected by the type its file declares: a declared str stays
 * str (a string column of digits), a declared type fills a column with no values, and an int
 * column the schema declares float is float. A declared int column whose values read as float
 * holds an int64 beyond 2^53: it is str, exactly as written (a number would round it).
 */
function withDeclaredType(scanned: ColumnType, declared: ColumnType | undefined): ColumnType {
  if (declared === undefined) return scanned;
  if (declared === "str" || scanned === "empty") return declared;
  if (declared === "float" && scanned === "int") return "float";
  if (declared === "int" && scanned === "float") return "str";
  return scanned;
}

/** The header's names, blank ones named by position and repeated ones numbered. */
export function headerNames(record: string[], file: string): string[] {
  const taken = new Set<string>();
  return record.map((raw, index) => {
    let name = raw.trim() || `column_${index + 1}`;
    if (taken.has(name)) {
      let suffix = 2;
      while (taken.has(`${name}_${suffix}`)) suffix += 1;
      name = `${name}_${suffix}`;
    }
    taken.add(name);
    if (name.length > 200)
      throw new CsvInputError({ file, line: 1, problem: "a column name is over 200 characters" });
    return name;
  });
}
