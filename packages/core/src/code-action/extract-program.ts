/**
 * Getting the program out of a model's reply, and the answer out of a program's output.
 */

const fence = /^[ \t]*(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n([\s\S]*?)^[ \t]*\1[ \t]*$/gm;
const pythonTags = new Set(["python", "py", "python3", ""]);

/**
 * The program in a reply: the first fenced block tagged python, py, Python, python3 or untagged;
 * else, when the reply has no such block, the whole reply.
 */
export function extractProgram(reply: string): string {
  for (const match of reply.matchAll(fence)) {
    const tag = (match[2] ?? "").toLowerCase();
    if (pythonTags.has(tag)) return (match[3] ?? "").replace(/\s+$/, "");
  }
  // An opened block the model never closed (a reply cut off at its length limit).
  const unclosed = /^[ \t]*```[ \t]*(python3?|py)?[ \t]*\n([\s\S]*)$/im.exec(reply);
  if (unclosed && !/^[ \t]*```/m.test(unclosed[2] ?? "")) return (unclosed[2] ?? "").replace(/\s+$/, "");
  return reply.trim();
}

/** The text after the last `RESULT:` line of stdout, as printed (trimmed), or undefined. */
export function parseResultLine(stdout: string): string | undefined {
  let result: string | undefined;
  for (const line of stdout.split("\n")) {
    const match = /^RESULT:(.*)$/.exec(line.replace(/\r$/, ""));
    if (match) result = (match[1] ?? "").trim();
  }
  return result;
}
