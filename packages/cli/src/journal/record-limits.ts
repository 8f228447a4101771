/**
 * What a run record keeps of each thing a program or a model can make big. A program's output can
 * be megabytes of control characters (each six characters once escaped as JSON): the record keeps
 * its end, where the traceback and the RESULT are, and says how much was cut.
 */
export const recordLimits = {
  /** The last characters kept of each of stdout and stderr. */
  outputTailCharacters: 4000,
  /** The first characters kept of a program. */
  programCharacters: 32 * 1024,
  /** The first characters kept of the model's reply (it holds the program again). */
  modelReplyCharacters: 4 * 1024,
  /** The first characters kept of the question, the answer and an attempt's RESULT. */
  textCharacters: 16 * 1024,
  /** The first characters kept of an error message. */
  errorCharacters: 4000,
  /** The first tool calls kept of a list (an attempt's, or the run's). */
  toolCalls: 100,
  /** The last attempts kept. */
  attempts: 20,
  /** A record's JSON above this is cut further (tool call values, then attempts) until it fits. */
  recordBytes: 1024 * 1024,
} as const;

export type Kept = { text: string; omitted?: number };

/** The first `limit` characters, and how many were cut. */
export function keepHead(text: string, limit: number): Kept {
  return text.length <= limit ? { text } : { text: text.slice(0, limit), omitted: text.length - limit };
}

/** The last `limit` characters, and how many were cut. */
export function keepTail(text: string, limit: number): Kept {
  return text.length <= limit ? { text } : { text: text.slice(-limit), omitted: text.length - limit };
}

/** The first `limit` items, and how many were cut. */
export function keepFirst<T>(items: readonly T[], limit: number): { items: T[]; omitted?: number } {
  return items.length <= limit
    ? { items: [...items] }
    : { items: items.slice(0, limit), omitted: items.length - limit };
}

type Fittable = { attempts: { toolCalls: object[] }[]; toolCalls: object[]; attemptsOmitted?: number };

/**
 * Cuts a record whose JSON is still over `recordBytes` (many big tool calls, many attempts): first
 * every tool call keeps only its name, status and error; then only the last three attempts stay.
 */
export function fitRecord<T extends Fittable>(record: T): T {
  if (Buffer.byteLength(JSON.stringify(record)) <= recordLimits.recordBytes) return record;
  const slim = (call: object) => {
    const {
      args: _args,
      result: _result,
      argsPreview: _a,
      resultPreview: _r,
      ...rest
    } = call as Record<string, unknown>;
    return { ...rest, valuesOmitted: true };
  };
  const slimmer: T = {
    ...record,
    toolCalls: record.toolCalls.map(slim),
    attempts: record.attempts.map((attempt) => ({ ...attempt, toolCalls: attempt.toolCalls.map(slim) })),
  };
  if (Buffer.byteLength(JSON.stringify(slimmer)) <= recordLimits.recordBytes) return slimmer;
  const cut = Math.max(0, slimmer.attempts.length - 3);
  return {
    ...slimmer,
    attempts: slimmer.attempts.slice(cut),
    attemptsOmitted: (slimmer.attemptsOmitted ?? 0) + cut,
  };
}
