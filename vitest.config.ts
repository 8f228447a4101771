import { defineConfig } from "vitest/config";

// `unit` is fast and needs nothing (no Docker); `docker` and `security` start real containers on the
// real engine (scripts/setup.sh makes sure one answers); `packaging` and `faults` run alone.
// No per-project pool size: Vitest 3's forks pool reads poolOptions from the root config only
// (createForksPool reads vitest.config.poolOptions.forks), so one set here never took effect.
export default defineConfig({
  test: {
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
          fileParallelism: false,
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
