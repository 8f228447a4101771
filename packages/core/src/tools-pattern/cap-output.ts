/** The default cap on each stream (and file) a shell tool hands the model. */
export const defaultOutputCap = 16 * 1024;

/**
 * Cuts `text` to at most `cap` bytes of UTF-8 (never in the middle of a character) and says how
 * much was cut. `producerTruncated`: the producer already kept only the first part of a flood
 * (the sandbox does), so the note says "more than"; `totalBytes`, when known, makes it exact.
 */
export function capOutput(
  text: string,
  options: { cap: number; label: string; producerTruncated?: boolean; totalBytes?: number },
): { text: string; note?: string } {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= options.cap && !options.producerTruncated) return { text };
  const kept = cutAtCharacter(bytes, options.cap);
  const total = options.totalBytes ?? bytes.length;
  const cutBytes = total - kept.length;
  const amount =
    options.producerTruncated && options.totalBytes === undefined
      ? `more than ${cutBytes} bytes`
      : `${cutBytes} bytes`;
  return {
    text: kept.toString("utf8"),
    note: `[${options.label} cut: showing the first ${kept.length} bytes, ${amount} cut. Write large output to a file in /workspace and look at parts of it (head, tail, grep).]`,
  };
}

function cutAtCharacter(bytes: Buffer, cap: number): Buffer {
  if (bytes.length <= cap) return bytes;
  let end = cap;
  // Step back over UTF-8 continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}
