import { defineConfig } from "vitest/config";
import { SlowFirstSequencer } from "./scripts/slow-first-sequencer.ts";

// `unit` is fast and needs nothing (no Docker); `docker` and `security` start real containers on the
// real engine (scripts/setup.sh makes sure one answers); `packaging` and `faults` run alone.
// How many files run at once is the command line's `--maxWorkers` (scripts/test.sh sets it per
// invocation). No per-project pool size: Vitest 3's forks pool reads maxForks and maxWorkers from the
// root config only (createForksPool reads vitest.config.poolOptions.forks), so one set in a project
// never took effect. What a project can set is `poolOptions.forks.singleFork`: its files then run
// one after another in one worker, after every other file of the same invocation has finished (for
// a test that ever needs the engine to itself; none does today).
// `pnpm test:unit` adds --no-isolate: one module registry for all the unit files, so LangChain and
// the SDKs load once, not once a file (isolation is a root-only pool option in Vitest 3 too).
// scripts/test.sh runs the unit files isolated.
// The files start slowest first (scripts/slow-first-sequencer.ts), also on a fresh clone without
// Vitest's results cache: a root-only option too.

export default defineConfig({
  test: {
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "packages/*/src/**/*.test.ts",
            "packages/*/test/**/*.test.ts",
            "examples/**/*.test.ts",
            "scripts/**/*.test.ts",
          ],
          exclude: ["**/*.docker.test.ts", "**/node_modules/**"],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "docker",
          include: [
            "packages/*/src/**/*.docker.test.ts",
            "packages/*/test/**/*.docker.test.ts",
            "tests/**/*.docker.test.ts",
            "examples/**/*.docker.test.ts",
          ],
          exclude: ["**/node_modules/**"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: true,
          maxConcurrency: 4,
        },
      },
      {
        // The adversarial catalogue (docs/security.md): hostile programs under runc and gVisor.
        test: {
          name: "security",
          include: ["tests/security/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: true,
        },
      },
      {
        // What users get: the packed tarballs installed by npm and pnpm outside the workspace, used
        // against the real engine (scripts/test.sh builds the packages first).
        test: {
          name: "packaging",
          include: ["tests/packaging/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
          testTimeout: 600_000,
          hookTimeout: 900_000,
          // Two files at a time (scripts/test.sh): each installs into a folder of its own under /tmp,
          // and the Inspector's 70 s program mostly waits while another file installs.
          fileParallelism: true,
        },
      },
      {
        // Faults of the machinery: SIGKILLed hosts, a restarted dockerd. Run alone (it restarts dockerd).
        test: {
          name: "faults",
          include: ["tests/faults/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
          testTimeout: 300_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
