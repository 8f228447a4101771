/**
 * Answers made comparable for the agreement check: numbers and numeric strings as decimals
 * rounded to a number of places, strings trimmed and case-folded, JSON compared structurally
 * with the same rules inside. `5952.35`, `"5952.35"` and `5952.350` all normalize the same.
 */

type Normal =
  | { kind: "decimal"; value: string }
  | { kind: "string"; value: string }
  | Normal[]
  | { [key: string]: Normal }
  | null
  | boolean;

const numberPattern = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const groupedPattern = /^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$/;

/** The answer as printed after `RESULT:` -> a canonical string; equal strings mean the answers agree. */
export function normalizeAnswer(answer: string, options: { decimals: number }): string {
  return JSON.stringify(normalizeText(answer.trim(), options.decimals));
}

function normalizeText(text: string, decimals: number): Normal {
  if (/^[[{"]/.test(text) || numberPattern.test(text) || /^(true|false|null)$/.test(text)) {
    try {
      // The reviver's third argument keeps each number's source text, so no float rounding slips in.
      const parsed: unknown = JSON.parse(text, (_key, value, context?: { source?: string }) =>
        typeof value === "number" && context?.source !== undefined
          ? { __decimalSource: context.source }
          : value,
      );
      return normalizeValue(parsed, decimals);
    } catch {
      // Not JSON (a Python repr such as [{'a': 1}]): compare as text.
    }
  }
  return normalizeString(text, decimals);
}

function normalizeValue(value: unknown, decimals: number): Normal {
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "number") return { kind: "decimal", value: roundDecimal(String(value), decimals) };
  if (typeof value === "string") return normalizeString(value, decimals);
  if (Array.isArray(value)) return value.map((item) => normalizeValue(item, decimals));
  if (typeof value === "object") {
    const source = (value as { __decimalSource?: unknown }).__decimalSource;
    if (typeof source === "string" && Object.keys(value).length === 1) {
      return { kind: "decimal", value: roundDecimal(source, decimals) };
    }
    const entries = Object.entries(value as Record<string, unknown>)
      .map(([key, item]) => [caseFold(key.trim()), normalizeValue(item, decimals)] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries);
  }
  return normalizeString(String(value), decimals);
}

function normalizeString(text: string, decimals: number): Normal {
  const trimmed = text.trim();
  const unsigned = trimmed.replace(/^\$/, "").replace(/^([+-])\$/, "$1");
  if (numberPattern.test(unsigned)) return { kind: "decimal", value: roundDecimal(unsigned, decimals) };
  if (groupedPattern.test(unsigned))
    return { kind: "decimal", value: roundDecimal(unsigned.replace(/,/g, ""), decimals) };
  return { kind: "string", value: caseFold(trimmed) };
}

/**
 * Full case folding, close to Python's str.casefold(): compatibility forms composed first (NFKC),
 * then upper case and back, which folds what lower case alone keeps apart ("Straße" and "STRASSE",
 * final and medial sigma).
 */
function caseFold(text: string): string {
  return text.normalize("NFKC").toUpperCase().toLowerCase();
}

/** Rounds a decimal string (exponent allowed) to `decimals` places, half away from zero, exactly. */
export function roundDecimal(text: string, decimals: number): string {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!match) return text;
  const negative = match[1] === "-";
  let digits = `${match[2] ?? ""}${match[3] ?? ""}`;
  // Position of the decimal point within `digits`.
  let point = (match[2] ?? "").length + Number(match[4] ?? 0);
  if (point < 0) {
    digits = "0".repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits = digits + "0".repeat(point - digits.length);
  const keep = point + decimals;
  if (digits.length < keep) digits = digits + "0".repeat(keep - digits.length);
  let kept = digits.slice(0, keep);
  const roundUp = (digits[keep] ?? "0") >= "5";
  if (roundUp) kept = incrementDigits(kept);
  if (kept.length > keep) point += kept.length - keep;
  const integerPart = (kept.slice(0, kept.length - decimals) || "0").replace(/^0+(?=\d)/, "");
  const fractionPart = decimals > 0 ? kept.slice(kept.length - decimals) : "";
  const isZero = /^0*$/.test(integerPart + fractionPart);
  const body = decimals > 0 ? `${integerPart}.${fractionPart}` : integerPart;
  return negative && !isZero ? `-${body}` : body;
}

function incrementDigits(digits: string): string {
  const characters = digits.split("");
  for (let index = characters.length - 1; index >= 0; index -= 1) {
    if (characters[index] === "9") {
      characters[index] = "0";
    } else {
      characters[index] = String(Number(characters[index]) + 1);
      return characters.join("");
    }
  }
  return `1${characters.join("")}`;
}
