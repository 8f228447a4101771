import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { BUILD_LOG_LINE_CHARACTERS, BUILD_LOG_LINES, createBuildProgress } from "./build-progress.ts";
import { createProgress, type Progress } from "./progress.ts";

/**
 * What `buildImage`'s onProgress passed on during a real `docker build` of the recipe FROM
 * codeaction/python:3.11 whose additions step failed (captured from the engine; FROM
 * codeaction/proxy:squid, which has no Python). The classic builder colours a step's stderr.
 */
const failedBuild = [
  "codeaction-test/try17:1: docker build FROM codeaction/proxy:squid",
  "Step 1/12 : ARG BASE=python:3.11-slim",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the Dockerfile's own text
  "Step 2/12 : FROM ${BASE}",
  "---> b7609fb2b193",
  "Step 3/12 : USER 0",
  "---> Running in 0919edc19ba3",
  "Removing intermediate container 0919edc19ba3",
  "---> e07dd68be6be",
  'Step 4/12 : ARG EXTRA_PIP=""',
  "---> Running in 829e08236855",
  "Removing intermediate container 829e08236855",
  "---> 92d733b1b9e1",
  "Step 5/12 : COPY additions.sh /tmp/additions.sh",
  "---> 87b5ae89af3c",
  'Step 6/12 : RUN if [ -n "$EXTRA_PIP" ]; then pip install --no-cache-dir $EXTRA_PIP; fi  && sh /tmp/additions.sh && rm /tmp/additions.sh',
  "---> Running in 1776ff317086",
  "\u001b[91m/tmp/additions.sh: 18: python3: not found\n\u001b[0m",
  "Removing intermediate container 1776ff317086",
];

/** Records what the renderer asks of the progress line. */
function recordingProgress() {
  const calls: Array<{ kind: "update" | "count"; text: string }> = [];
  const progress: Progress = {
    update: (text) => calls.push({ kind: "update", text }),
    count: (text) => calls.push({ kind: "count", text }),
    note: () => {},
    stop: () => {},
    hold: () => {},
    release: () => {},
  };
  return { progress, calls };
}

describe("createBuildProgress", () => {
  it("says once that the build started, then follows its steps and the step's last output line", () => {
    const { progress, calls } = recordingProgress();
    const build = createBuildProgress({ progress, image: "codeaction/python:3.11" });
    for (const line of failedBuild) build.line(line);
    expect(calls.filter((call) => call.kind === "update")).toEqual([
      { kind: "update", text: "building codeaction/python:3.11 (its log is shown if it fails)" },
    ]);
    const counts = calls.filter((call) => call.kind === "count").map((call) => call.text);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the Dockerfile's own text
    expect(counts).toContain("building codeaction/python:3.11: step 2 of 12: FROM ${BASE}");
    // The builder's own "---> id" and "Removing intermediate container" lines are not shown.
    expect(counts).toContain("building codeaction/python:3.11: step 3 of 12: USER 0");
    expect(counts.at(-1)).toBe(
      'building codeaction/python:3.11: step 6 of 12: RUN if [ -n "$EXTRA_PIP" ]; then pip install --no-cache-dir $EXTRA_PIP; fi  && sh /tmp/additions.sh && rm /tmp/additions.sh · /tmp/additions.sh: 18: python3: not found',
    );
  });

  it("keeps the whole log of a short build for the error message, colours removed", () => {
    const build = createBuildProgress({ progress: recordingProgress().progress, image: "x:1" });
    expect(build.log()).toBe("");
    for (const line of failedBuild) build.line(line);
    const log = build.log().split("\n");
    expect(log[0]).toBe("build log of x:1:");
    expect(log).toHaveLength(1 + failedBuild.length);
    expect(log).toContain("  /tmp/additions.sh: 18: python3: not found");
    expect(log.join("\n")).not.toContain("\u001b");
  });

  it("bounds the log: the last lines, each cut, other controls escaped", () => {
    const build = createBuildProgress({ progress: recordingProgress().progress, image: "x:1" });
    for (let index = 0; index < BUILD_LOG_LINES + 50; index++) build.line(`line ${index}`);
    build.line(`${"a".repeat(BUILD_LOG_LINE_CHARACTERS + 10)}\u001b]0;title\u0007`);
    const log = build.log().split("\n");
    expect(log[0]).toBe(`build log of x:1 (the last ${BUILD_LOG_LINES} of ${BUILD_LOG_LINES + 51} lines):`);
    expect(log).toHaveLength(BUILD_LOG_LINES + 1);
    expect(log[1]).toBe("  line 51");
    expect(log.at(-1)).toBe(`  ${"a".repeat(BUILD_LOG_LINE_CHARACTERS)}… (20 more characters)`);
    build.line("\u001b]0;title\u0007 done");
    expect(build.log().split("\n").at(-1)).toBe("  \\x1b]0;title\\x07 done");
  });

  it("in a pipe prints one line for the whole build; with quiet, nothing", () => {
    for (const quiet of [false, true]) {
      const stream = Object.assign(new PassThrough(), { isTTY: false });
      let text = "";
      stream.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      const build = createBuildProgress({ progress: createProgress({ stream, quiet }), image: "x:1" });
      for (const line of failedBuild) build.line(line);
      expect(text).toBe(quiet ? "" : "[codeaction] building x:1 (its log is shown if it fails)\n");
    }
  });
});
