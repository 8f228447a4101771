/**
 * Makes text that came from a program or a tool safe to print on a terminal. A program can print
 * escape sequences that clear the screen, retitle the window, write to the clipboard (OSC 52),
 * fake a hyperlink (OSC 8), or move the cursor to overwrite what we printed. Every such byte is
 * shown as a visible escape instead: ESC becomes `\x1b`, so `\x1b]0;pwned\x07` prints as text.
 *
 * Kept as they are: printable characters, newline and tab (unless `keepNewlines` is false, for
 * one-line fields). Escaped: C0 controls (including carriage return, which can overwrite a line),
 * DEL, C1 controls (U+0080..U+009F, which some terminals treat as ESC [ and friends), and the
 * Unicode bidirectional controls that can make text read differently from what it is.
 */
export function escapeForTerminal(text: string, options: { keepNewlines?: boolean } = {}): string {
  const keepNewlines = options.keepNewlines ?? true;
  let output = "";
  for (const character of text) {
    const code = character.codePointAt(0)!;
    if (keepNewlines && (character === "\n" || character === "\t")) {
      output += character;
    } else if (code < 0x20 || code === 0x7f || (code >= 0x80 && code <= 0x9f)) {
      output += `\\x${code.toString(16).padStart(2, "0")}`;
    } else if (isBidiControl(code)) {
      output += `\\u${code.toString(16).padStart(4, "0")}`;
    } else {
      output += character;
    }
  }
  return output;
}

function isBidiControl(code: number): boolean {
  return (
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069) ||
    code === 0x200e ||
    code === 0x200f
  );
}
