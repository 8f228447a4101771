import { escapeForTerminal } from "./escape-for-terminal.ts";
import type { Progress } from "./progress.ts";

/** Lines of a build's log kept for the error message, and characters kept of each line. */
export const BUILD_LOG_LINES = 200;
export const BUILD_LOG_LINE_CHARACTERS = 1000;

/** Follows one image build's lines (`buildImage`'s `onProgress`) for the progress line and the error message. */
export type BuildProgress = {
  /** One or more lines the build printed. */
  line(text: string): void;
  /** The end of the build's log (at most BUILD_LOG_LINES lines), for the message of a failed build; "" before any line. */
  log(): string;
};

const stepPattern = /^Step (\d+)\/(\d+) : (.*)$/;
/** The colours the classic builder gives a step's stderr (removed; every other control is escaped). */
const colourPattern = /\u001b\[[0-9;]*m/g;
/** The classic builder's own bookkeeping: nothing a reader needs while it runs. */
const noisePattern = /^(---> |Removing intermediate container |Successfully (built|tagged) )/;

/**
 * Renders an image build as progress: a plain line when the build starts (in a pipe that is all),
 * and on a terminal one line that follows it: "building NAME: step 6 of 12: RUN ... · last output".
 * Every line (escaped) goes into a bounded log: the last BUILD_LOG_LINES lines, each cut at
 * BUILD_LOG_LINE_CHARACTERS.
 */
export function createBuildProgress(options: { progress: Progress; image: string }): BuildProgress {
  const { progress, image } = options;
  const kept: string[] = [];
  let total = 0;
  let step = "";
  let output = "";
  const keep = (line: string) => {
    total += 1;
    kept.push(line);
    if (kept.length > BUILD_LOG_LINES) kept.shift();
  };
  const show = () => {
    const detail = output ? ` · ${output}` : "";
    progress.count(`building ${image}: ${step || "starting"}${detail}`);
  };
  return {
    line(text) {
      if (total === 0) progress.update(`building ${image} (its log is shown if it fails)`);
      for (const raw of text.split(/\r\n|\n|\r/)) {
        const plain = raw.replace(colourPattern, "").trimEnd();
        const line = escapeForTerminal(cutLine(plain), { keepNewlines: false });
        if (!line.trim()) continue;
        keep(line);
        const match = stepPattern.exec(line);
        if (match) {
          step = `step ${match[1]} of ${match[2]}: ${match[3]}`;
          output = "";
        } else if (!noisePattern.test(line.trimStart())) {
          output = line.trim();
        }
      }
      show();
    },
    log() {
      if (total === 0) return "";
      const heading =
        total > kept.length
          ? `build log of ${image} (the last ${kept.length} of ${total} lines):`
          : `build log of ${image}:`;
      return [heading, ...kept.map((line) => `  ${line}`)].join("\n");
    },
  };
}

function cutLine(line: string): string {
  if (line.length <= BUILD_LOG_LINE_CHARACTERS) return line;
  return `${line.slice(0, BUILD_LOG_LINE_CHARACTERS)}… (${line.length - BUILD_LOG_LINE_CHARACTERS} more characters)`;
}
