// The order in which Vitest starts test files (vitest.config.ts, `sequence.sequencer`): the slowest
// first, so that with four files at a time no long file starts last and runs alone at the end.
// Vitest's own order uses the durations of the last run on this machine (its results cache under
// node_modules/.vite); a fresh clone has none, and Vitest then starts the larger files first, which
// put the 54 s tests/security/argument-amplification.test.ts (a small file) last: the docker and
// security projects' wall time had a tail of about 40 s (CONTRIBUTING.md, "How the suite runs").
// Here a file's duration is the cached one where there is one, else the committed figure below.
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each file of 20 s or more took in a full run of scripts/test.sh (four docker and security
 * files at a time, on the project's two-core machine), keyed as Vitest's results cache keys them:
 * "<project>:<path from the root>". Files not listed took less and start after these. A rough
 * figure is enough: only the order matters. Add a file here when it takes 20 s or more.
 */
export const SLOW_FILES: Readonly<Record<string, number>> = {
  "security:tests/security/resources.test.ts": 122,
  // The packaging project, two files at a time: the Inspector's 70 s program first.
  "packaging:tests/packaging/installed-cli-servers.test.ts": 90,
  "packaging:tests/packaging/installed-packages.test.ts": 85,
  "packaging:tests/packaging/observability-install.test.ts": 62,
  "packaging:tests/packaging/quick-start.test.ts": 30,
  "packaging:tests/packaging/slim-install.test.ts": 21,
  "docker:packages/sandbox/src/limits.docker.test.ts": 79,
  "docker:tests/remote/remote-engine.docker.test.ts": 65,
  "docker:packages/cli/test/cli.docker.test.ts": 62,
  "docker:packages/cli/test/journal.docker.test.ts": 55,
  "security:tests/security/argument-amplification.test.ts": 54,
  "docker:packages/cli/test/analyst.docker.test.ts": 49,
  "docker:packages/core/src/program/run-program.docker.test.ts": 46,
  "security:tests/security/bridge.test.ts": 45,
  "security:tests/security/lifecycle-config.test.ts": 45,
  "docker:packages/cli/test/approve-later.docker.test.ts": 44,
  "docker:packages/cli/test/mcp-client-fit.docker.test.ts": 33,
  "docker:packages/core/test/threads.docker.test.ts": 30,
  "docker:packages/cli/test/threads-cli.docker.test.ts": 20,
  "docker:packages/cli/test/tool-author.docker.test.ts": 33,
  "security:tests/security/privilege.test.ts": 33,
  "docker:packages/cli/test/desk-cards.docker.test.ts": 32,
  "docker:packages/sandbox/src/prelaunch/prelaunch.docker.test.ts": 32,
  "docker:tests/durable/resume.docker.test.ts": 30,
  "docker:packages/cli/test/resume-binding.docker.test.ts": 35,
  "security:tests/security/host-bounds.test.ts": 30,
  "docker:packages/sandbox/src/network/egress-proxy.docker.test.ts": 27,
  "security:tests/security/filesystem.test.ts": 24,
  "security:tests/security/network-information.test.ts": 23,
  "docker:packages/cli/test/desk.docker.test.ts": 22,
  "docker:packages/sandbox/src/pool.docker.test.ts": 22,
  "docker:examples/examples.docker.test.ts": 22,
  "security:tests/security/mcp-http.test.ts": 20,
};

/** What is known of a file before it runs: whether its last run failed, and how long it takes. */
export interface KnownDuration {
  failed: boolean;
  /** Undefined: neither cached nor listed (a short file, or a new one). */
  seconds: number | undefined;
}

/**
 * Files that failed last time first (as Vitest does), then the longest first; files of unknown
 * duration last. The sort is stable: files that compare equal keep the order they came in.
 */
export function slowFirst<File>(files: readonly File[], known: (file: File) => KnownDuration): File[] {
  const described = files.map((file) => ({ file, ...known(file) }));
  described.sort((a, b) => Number(b.failed) - Number(a.failed) || (b.seconds ?? -1) - (a.seconds ?? -1));
  return described.map(({ file }) => file);
}

/** A file's duration from Vitest's results cache (this machine's last run), else from SLOW_FILES. */
export function knownDuration(
  key: string,
  cached: { duration: number; failed: boolean } | undefined,
  listed: Readonly<Record<string, number>> = SLOW_FILES,
): KnownDuration {
  if (cached) return { failed: cached.failed, seconds: cached.duration / 1000 };
  return { failed: false, seconds: listed[key] };
}

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const inVitestOrder = await super.sort(files);
    const root = this.ctx.config.root;
    return slowFirst(inVitestOrder, (file) => {
      const key = `${file.project.name}:${relative(root, file.moduleId)}`;
      return knownDuration(key, this.ctx.cache.getFileTestResults(key));
    });
  }
}
