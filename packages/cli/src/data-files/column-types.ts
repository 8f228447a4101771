/** The type of a CSV column, inferred from every non-empty cell. */
export type ColumnType = "int" | "float" | "bool" | "str" | "empty";

export type CellValue = number | boolean | string | null;

const integerPattern = /^[+-]?(0|[1-9]\d*)$/;
// No leading zeros ("007" stays a string: it is an identifier, not a number).
const floatPattern = /^[+-]?((0|[1-9]\d*)(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const booleanPattern = /^(true|false)$/i;

/** The narrowest type one cell fits. Blank cells are "empty". */
export function classifyCell(cell: string): ColumnType {
  const text = cell.trim();
  if (text === "") return "empty";
  if (integerPattern.test(text) && Number.isSafeInteger(Number(text))) return "int";
  if (floatPattern.test(text) && Number.isFinite(Number(text))) return "float";
  if (booleanPattern.test(text)) return "bool";
  return "str";
}

/** The type of a column that so far was `current` and now also holds a cell of type `cell`. */
export function widenType(current: ColumnType, cell: ColumnType): ColumnType {
  if (cell === "empty" || current === cell) return current;
  if (current === "empty") return cell;
  if ((current === "int" && cell === "float") || (current === "float" && cell === "int")) return "float";
  return "str";
}

/** A cell as its column's type: blank cells are null; str columns keep the text exactly as written. */
export function convertCell(cell: string, type: ColumnType): CellValue {
  const text = cell.trim();
  if (text === "") return null;
  switch (type) {
    case "int":
    case "float":
      return Number(text);
    case "bool":
      return text.toLowerCase() === "true";
    default:
      return cell;
  }
}

/**
 * A cell of a column typed from a sample: as convertCell when it fits the column's type (an int
 * column's float cell is a number too), else its text exactly as written (never NaN or false; an
 * int column's integer beyond 2^53, which a number would round, is text too).
 */
export function convertSampledCell(cell: string, type: ColumnType): CellValue {
  const cellType = classifyCell(cell);
  if (cellType === "empty") return null;
  if (type === "int" && cellType === "float" && integerPattern.test(cell.trim())) return cell;
  const numeric = (kind: ColumnType) => kind === "int" || kind === "float";
  if (cellType === type || (numeric(cellType) && numeric(type))) return convertCell(cell, cellType);
  return cell;
}

/** The Python type name a program sees. */
export function pythonTypeName(type: ColumnType): string {
  return type === "empty" ? "None" : type;
}
