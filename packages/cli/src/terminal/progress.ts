import { basename } from "node:path";
import { cutToWidth } from "./display-width.ts";
import { escapeForTerminal } from "./escape-for-terminal.ts";

/**
 * A progress line on stderr. On a terminal it is a spinner that rewrites one line; anywhere else
 * (a pipe, a file, CI) each new step is one plain line, and nothing animates. Never touches stdout.
 * Every text goes through escapeForTerminal here (a step or count on one line, a note keeping its
 * newlines): file names, tool names and reasons shown as progress cannot drive the terminal.
 */
export type Progress = {
  /** Shows what is happening now. */
  update(text: string): void;
  /** A running count (rows, bytes) of the current step: shown on a terminal only, never as plain lines. */
  count(text: string): void;
  /** Prints a line that stays (above the spinner on a terminal). */
  note(text: string): void;
  /** Clears the spinner; the next update starts it again. */
  stop(): void;
  /**
   * A question waits for an answer on the terminal: the spinner is cleared and stays off (updates
   * are kept, not drawn) until `release`, so that its redraw cannot erase the question.
   */
  hold(): void;
  /** The question was answered: the spinner shows the current step again. */
  release(): void;
};

const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

export function createProgress(options: {
  stream: ProgressStream;
  /** Spinner on a terminal (default: when the stream is a TTY). */
  interactive?: boolean;
  /** Prefix of plain lines. */
  prefix?: string;
  /** No progress at all (`--quiet`); notes still print. */
  quiet?: boolean;
}): Progress {
  const { stream } = options;
  const progress = options.quiet
    ? plainProgress(stream, undefined)
    : (options.interactive ?? stream.isTTY === true)
      ? spinnerProgress(stream)
      : plainProgress(stream, options.prefix ?? "codeaction");
  const line = (text: string) => escapeForTerminal(text, { keepNewlines: false });
  return {
    update: (text) => progress.update(line(text)),
    count: (text) => progress.count(line(text)),
    note: (text) => progress.note(escapeForTerminal(text)),
    stop: () => progress.stop(),
    hold: () => progress.hold(),
    release: () => progress.release(),
  };
}

/** Progress as plain lines: each new step once, with `prefix`; none at all without a prefix. */
function plainProgress(stream: ProgressStream, prefix: string | undefined): Progress {
  let lastPlain = "";
  return {
    update(text) {
      if (prefix === undefined) return;
      if (text !== lastPlain) stream.write(`[${prefix}] ${text}\n`);
      lastPlain = text;
    },
    count() {
      // Counts animate a spinner only: as plain lines they would flood the stream.
    },
    note(text) {
      stream.write(`${text}\n`);
    },
    stop() {
      // Nothing to clear: plain lines stay.
    },
    hold() {
      // Plain lines never overwrite a question.
    },
    release() {
      // Nothing was held.
    },
  };
}

/** Progress as a spinner rewriting one line of a terminal, with the step's elapsed time. */
function spinnerProgress(stream: ProgressStream): Progress {
  let current = "";
  let frame = 0;
  let started = 0;
  /** A count continues its step: the elapsed time keeps running from the step's start. */
  let counting = false;
  /** Questions open on the terminal: nothing is drawn while there is one. */
  let held = 0;

  const render = () => {
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const width = Math.max(20, (stream.columns || 80) - 1);
    // Cut by columns, not code points: a wide character takes two, and a line longer than the
    // terminal wraps, so the next redraw would no longer clear it.
    const line = cutToWidth(`${frames[frame % frames.length]} ${current} (${seconds}s)`, width);
    frame += 1;
    stream.write(`\r\u001b[K${line}`);
  };
  const { animate, clear, running } = redrawTimer(stream, render);

  const progress: Progress = {
    update(text) {
      if (text !== current && !counting) started = performance.now();
      current = text;
      if (held > 0) return;
      if (!running()) animate();
      render();
    },
    count(text) {
      counting = true;
      progress.update(text);
      counting = false;
    },
    note(text) {
      const wasRunning = running();
      clear();
      stream.write(`${text}\n`);
      if (wasRunning && held === 0) {
        animate();
        render();
      }
    },
    stop() {
      clear();
      current = "";
    },
    hold() {
      held += 1;
      clear();
    },
    release() {
      held = Math.max(0, held - 1);
      if (held === 0 && current !== "") progress.update(current);
    },
  };
  return progress;
}

/** The spinner's redraw every 80 ms: started, cleared (the line erased), and whether it runs. */
function redrawTimer(stream: ProgressStream, render: () => void) {
  let timer: NodeJS.Timeout | undefined;
  return {
    animate() {
      timer = setInterval(render, 80);
      timer.unref();
    },
    clear() {
      if (!timer) return;
      clearInterval(timer);
      timer = undefined;
      stream.write("\r\u001b[K");
    },
    running: () => timer !== undefined,
  };
}

/** "reading orders.csv: 120,000 rows, 8.1 of 60.2 MB" for a scan's progress. */
export function describeReading(
  file: string,
  progress: { rows: number; bytesRead?: number; totalBytes: number },
): string {
  const megabytes = (bytes: number) => (bytes / 1_000_000).toFixed(1);
  const bytes =
    progress.bytesRead === undefined
      ? `${megabytes(progress.totalBytes)} MB`
      : `${megabytes(progress.bytesRead)} of ${megabytes(progress.totalBytes)} MB`;
  // The file's name alone: the line must fit a terminal's width.
  return `reading ${basename(file)}: ${progress.rows.toLocaleString("en-US")} rows, ${bytes}`;
}

/** "placing orders.csv in the sandbox: 12.6 of 44.7 MB" for a data file's copy into the sandbox. */
export function describeCopy(copy: { name: string; bytesCopied: number; totalBytes: number }): string {
  const megabytes = (bytes: number) => (bytes / 1_000_000).toFixed(1);
  const name = escapeForTerminal(copy.name, { keepNewlines: false });
  return `placing ${name} in the sandbox: ${megabytes(copy.bytesCopied)} of ${megabytes(copy.totalBytes)} MB`;
}
