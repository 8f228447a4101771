import { existsSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { createVitest } from "vitest/node";
import { knownDuration, SLOW_FILES, SlowFirstSequencer, slowFirst } from "./slow-first-sequencer.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const listed = {
  "security:tests/security/slow.test.ts": 120,
  "docker:packages/a/src/middling.docker.test.ts": 40,
};

/** Orders keys as the sequencer does, with `cache` standing in for Vitest's results cache. */
function order(keys: string[], cache: Record<string, { duration: number; failed: boolean }> = {}): string[] {
  return slowFirst(keys, (key) => knownDuration(key, cache[key], listed));
}

describe("the slow-first test order", () => {
  test("a fresh clone (no results cache): the listed files first, longest first, then the rest in Vitest's order", () => {
    const inVitestOrder = [
      "docker:packages/a/src/large-but-quick.docker.test.ts",
      "docker:packages/a/src/middling.docker.test.ts",
      "docker:packages/a/src/small-and-quick.docker.test.ts",
      "security:tests/security/slow.test.ts",
    ];
    expect(order(inVitestOrder)).toEqual([
      "security:tests/security/slow.test.ts",
      "docker:packages/a/src/middling.docker.test.ts",
      "docker:packages/a/src/large-but-quick.docker.test.ts",
      "docker:packages/a/src/small-and-quick.docker.test.ts",
    ]);
  });

  test("this machine's last run outweighs the list, and a file that failed last time starts first", () => {
    const cache = {
      "security:tests/security/slow.test.ts": { duration: 20_000, failed: false },
      "docker:packages/a/src/quick.docker.test.ts": { duration: 500, failed: true },
      "docker:packages/a/src/grew.docker.test.ts": { duration: 90_000, failed: false },
    };
    expect(
      order(
        [
          "security:tests/security/slow.test.ts",
          "docker:packages/a/src/new.docker.test.ts",
          "docker:packages/a/src/middling.docker.test.ts",
          "docker:packages/a/src/grew.docker.test.ts",
          "docker:packages/a/src/quick.docker.test.ts",
        ],
        cache,
      ),
    ).toEqual([
      "docker:packages/a/src/quick.docker.test.ts",
      "docker:packages/a/src/grew.docker.test.ts",
      "docker:packages/a/src/middling.docker.test.ts",
      "security:tests/security/slow.test.ts",
      "docker:packages/a/src/new.docker.test.ts",
    ]);
  });

  test("every file the committed list names exists, under a project that runs several files at a time", () => {
    const keys = Object.keys(SLOW_FILES);
    expect(keys.length).toBeGreaterThan(0);
    const problems = keys.filter((key) => {
      const [project, path = ""] = key.split(":");
      const inProject =
        (project === "docker" && path.endsWith(".docker.test.ts")) ||
        (project === "security" && path.startsWith("tests/security/")) ||
        (project === "packaging" && path.startsWith("tests/packaging/"));
      return !inProject || !existsSync(`${root}${path}`);
    });
    expect(problems).toEqual([]);
  });

  test("Vitest itself, without a results cache (a fresh clone), starts the docker and security projects with the listed files, longest first", async () => {
    const vitest = await createVitest("test", {
      root,
      cache: false,
      watch: false,
      project: ["docker", "security"],
    });
    try {
      const files = await vitest.globTestSpecifications();
      await vitest.cache.stats.populateStats(root, files);
      const sorted = await new SlowFirstSequencer(vitest).sort(files);
      const keys = sorted.map((file) => `${file.project.name}:${relative(root, file.moduleId)}`);
      const listed = Object.keys(SLOW_FILES).filter((key) => !key.startsWith("packaging:"));
      const first = keys.slice(0, listed.length);
      expect([...first].sort()).toEqual([...listed].sort());
      const seconds = first.map((key) => SLOW_FILES[key] ?? 0);
      expect(seconds).toEqual([...seconds].sort((a, b) => b - a));
      expect(keys.length).toBeGreaterThan(listed.length);
    } finally {
      await vitest.close();
    }
  });

  test("without a results cache, the packaging project starts with the Inspector's file, then the rest longest first", async () => {
    const vitest = await createVitest("test", { root, cache: false, watch: false, project: ["packaging"] });
    try {
      const files = await vitest.globTestSpecifications();
      await vitest.cache.stats.populateStats(root, files);
      const sorted = await new SlowFirstSequencer(vitest).sort(files);
      const keys = sorted.map((file) => `${file.project.name}:${relative(root, file.moduleId)}`);
      expect(keys[0]).toBe("packaging:tests/packaging/installed-cli-servers.test.ts");
      const seconds = keys.map((key) => SLOW_FILES[key] ?? 0);
      expect(seconds).toEqual([...seconds].sort((a, b) => b - a));
    } finally {
      await vitest.close();
    }
  });
});
