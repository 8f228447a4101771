import { PassThrough } from "node:stream";
// Measured with string-width itself, not our wrapper of it, so a broken wrapper fails here.
import displayWidth from "string-width";
import { describe, expect, it } from "vitest";
import { createProgress, describeCopy, describeReading } from "./progress.ts";

function capture(options: { isTTY: boolean; columns?: number }) {
  const stream = Object.assign(new PassThrough(), options);
  let text = "";
  stream.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { stream, text: () => text };
}

describe("createProgress", () => {
  it("prints each new step once as a plain line when the stream is not a terminal", () => {
    const output = capture({ isTTY: false });
    const progress = createProgress({ stream: output.stream });
    progress.update("reading orders.csv");
    progress.update("reading orders.csv");
    progress.update("waiting for the model");
    progress.note("model: a REPLAY");
    progress.stop();
    expect(output.text()).toBe(
      "[codeaction] reading orders.csv\n[codeaction] waiting for the model\nmodel: a REPLAY\n",
    );
  });

  it("rewrites one line on a terminal, fits it to the width, and clears it on stop", () => {
    const output = capture({ isTTY: true, columns: 30 });
    const progress = createProgress({ stream: output.stream });
    progress.update("running the program (attempt 1) in the sandbox");
    progress.stop();
    const text = output.text();
    expect(text.startsWith("\r\u001b[K")).toBe(true);
    expect(text.endsWith("\r\u001b[K")).toBe(true);
    expect(text).not.toContain("\n");
    const line = text.split("\r\u001b[K")[1]!;
    expect(line.length).toBeLessThanOrEqual(29);
  });

  it("fits a line of wide characters to the terminal's columns, so it never wraps", () => {
    const output = capture({ isTTY: true, columns: 30 });
    const progress = createProgress({ stream: output.stream });
    progress.update("the program called 検索ツール_顧客データ_読み込み");
    progress.stop();
    const line = output.text().split("\r\u001b[K")[1]!;
    expect(displayWidth(line)).toBeLessThanOrEqual(29);
    expect(line).toContain("検");
  });

  it("held for a question, draws nothing (an update is kept), and draws the step again on release", () => {
    const output = capture({ isTTY: true, columns: 80 });
    const progress = createProgress({ stream: output.stream });
    progress.update("running the program (attempt 1) in the sandbox");
    progress.hold();
    const atHold = output.text();
    expect(atHold.endsWith("\r\u001b[K")).toBe(true);
    progress.update("the program called lookup");
    progress.count("the program called lookup");
    progress.note("a note stays");
    expect(output.text()).toBe(`${atHold}a note stays\n`);
    progress.release();
    expect(output.text().slice(atHold.length)).toMatch(
      /^a note stays\n\r\u001b\[K\S the program called lookup \(/,
    );
    progress.stop();
  });

  it("uses 80 columns when a terminal reports none", () => {
    const output = capture({ isTTY: true, columns: 0 });
    const progress = createProgress({ stream: output.stream });
    progress.update("x".repeat(200));
    progress.stop();
    expect(output.text().split("\r\u001b[K")[1]!.length).toBe(79);
  });

  it("shows counts on a terminal only, and nothing but notes when quiet", () => {
    const plain = capture({ isTTY: false });
    const plainProgress = createProgress({ stream: plain.stream });
    plainProgress.count("reading a.csv: 10,000 rows");
    expect(plain.text()).toBe("");
    const terminal = capture({ isTTY: true, columns: 100 });
    const terminalProgress = createProgress({ stream: terminal.stream });
    terminalProgress.count("reading a.csv: 10,000 rows");
    terminalProgress.stop();
    expect(terminal.text()).toContain("reading a.csv: 10,000 rows");
    const quiet = capture({ isTTY: true });
    const quietProgress = createProgress({ stream: quiet.stream, quiet: true });
    quietProgress.update("checking the Docker sandbox");
    quietProgress.count("reading a.csv: 10,000 rows");
    quietProgress.note("codeaction: interrupted");
    quietProgress.stop();
    expect(quiet.text()).toBe("codeaction: interrupted\n");
  });

  it("describes a file's reading by its name, rows and megabytes", () => {
    expect(
      describeReading("/data/big/orders.csv", {
        rows: 120_000,
        bytesRead: 8_100_000,
        totalBytes: 60_200_000,
      }),
    ).toBe("reading orders.csv: 120,000 rows, 8.1 of 60.2 MB");
    expect(describeReading("sheet.xlsx", { rows: 500, totalBytes: 18_345 })).toBe(
      "reading sheet.xlsx: 500 rows, 0.0 MB",
    );
  });
});

describe("describeCopy", () => {
  it("names the file, escaped, and the megabytes copied of its size", () => {
    expect(describeCopy({ name: "orders.csv", bytesCopied: 4_194_304, totalBytes: 44_720_633 })).toBe(
      "placing orders.csv in the sandbox: 4.2 of 44.7 MB",
    );
    expect(describeCopy({ name: "a\u001b[2Jb.csv", bytesCopied: 0, totalBytes: 0 })).not.toContain("\u001b");
  });
});
