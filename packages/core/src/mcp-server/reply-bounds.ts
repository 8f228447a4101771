/** Characters of stdout and of stderr a run_program reply keeps: their ends. */
export const replyTailCharacters = 64 * 1024;
/** Characters of the RESULT a run_program reply keeps: its start. */
export const replyResultCharacters = 128 * 1024;

/** The end of `text`, at most `limit` characters, saying how much was left out before it. */
export function boundedTail(text: string, limit = replyTailCharacters): { text: string; cut: boolean } {
  if (text.length <= limit) return { text, cut: false };
  return {
    text: `[... ${text.length - limit} characters before this were left out]\n${text.slice(-limit)}`,
    cut: true,
  };
}

/** The start of a RESULT, at most `limit` characters, saying how much was left out after it. */
export function boundedResult(text: string, limit = replyResultCharacters): { text: string; cut: boolean } {
  if (text.length <= limit) return { text, cut: false };
  return {
    text: `${text.slice(0, limit)}\n[... ${text.length - limit} more characters were left out]`,
    cut: true,
  };
}
