// scripts/test.sh's order of work, on a copy of it whose set-up scripts, pnpm and node are stand-ins
// that record what ran (the real suite restarts dockerd and takes minutes): the tests' set-up runs
// while the checks and the unit project run, the docker project waits for it, and a failed set-up
// fails the command with its output shown.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";

const testScript = fileURLToPath(new URL("./test.sh", import.meta.url));
let folder = "";
afterEach(() => rmSync(folder, { recursive: true, force: true }));

function executable(path: string, text: string): void {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

/**
 * A root with scripts/test.sh and stand-ins. The tests' set-up waits (SETUP_WAIT_TENTHS of a second,
 * 20 s by default) for the unit project to start and records whether it did, so it can only see it
 * if the two overlap; it exits with SETUP_STATUS. pnpm fails for the arguments in FAIL_PNPM.
 */
function standInRoot(): string {
  folder = mkdtempSync(join(tmpdir(), "codeaction-test-command-"));
  mkdirSync(join(folder, "scripts"));
  mkdirSync(join(folder, "bin"));
  copyFileSync(testScript, join(folder, "scripts", "test.sh"));
  writeFileSync(join(folder, "scripts", "setup.sh"), 'mkdir -p "$ROOT/.tools"\n');
  executable(
    join(folder, "scripts", "setup-tests.sh"),
    [
      "#!/usr/bin/env bash",
      'calls="$(dirname "$0")/../calls"',
      'echo "setup-tests started" >>"$calls"',
      'for _ in $(seq 1 "$SETUP_WAIT_TENTHS"); do',
      '  if grep -q "^pnpm vitest run --project unit" "$calls"; then echo "setup-tests saw the unit project running" >>"$calls"; break; fi',
      "  sleep 0.1",
      "done",
      'echo "stand-in set-up output: apt-get said no" >&2',
      'echo "setup-tests finished" >>"$calls"',
      'exit "$SETUP_STATUS"',
    ].join("\n"),
  );
  const recorder = (name: string) =>
    [
      "#!/usr/bin/env bash",
      `echo "${name} $*" >>"${join(folder, "calls")}"`,
      `if [ "$*" = "$FAIL_PNPM" ]; then exit 1; fi`,
    ].join("\n");
  executable(join(folder, "bin", "pnpm"), recorder("pnpm"));
  executable(join(folder, "bin", "node"), recorder("node"));
  return folder;
}

function runTestCommand(environment: Record<string, string>) {
  const root = standInRoot();
  const run = spawnSync("bash", [join(root, "scripts", "test.sh")], {
    encoding: "utf8",
    env: {
      ...process.env,
      PATH: `${join(root, "bin")}:${process.env.PATH}`,
      SETUP_WAIT_TENTHS: "200",
      SETUP_STATUS: "0",
      FAIL_PNPM: "",
      ...environment,
    },
  });
  const calls = readFileSync(join(root, "calls"), "utf8").trim().split("\n");
  return { status: run.status, stderr: run.stderr, calls };
}

describe("scripts/test.sh: the tests' set-up in the background", () => {
  test("it runs while the checks and the unit project run, and the docker project starts after it", () => {
    const { status, calls } = runTestCommand({});
    expect(status).toBe(0);
    expect(calls).toContain("setup-tests saw the unit project running");
    const finished = calls.indexOf("setup-tests finished");
    const dockerProject = calls.findIndex((call) => call.includes("--project docker --project security"));
    expect(finished).toBeGreaterThan(-1);
    expect(dockerProject).toBeGreaterThan(finished);
  });

  test("a failed set-up fails the command before the docker project, with its output shown", () => {
    const { status, stderr, calls } = runTestCommand({ SETUP_STATUS: "3" });
    expect(status).toBe(3);
    expect(stderr).toContain("stand-in set-up output: apt-get said no");
    expect(stderr).toContain("[test] scripts/setup-tests.sh failed (exit 3)");
    expect(calls.some((call) => call.includes("--project docker"))).toBe(false);
  });

  test("a failed check ends the command, but only once the set-up has finished", () => {
    const { status, calls } = runTestCommand({ FAIL_PNPM: "typecheck", SETUP_WAIT_TENTHS: "10" });
    expect(status).toBe(1);
    expect(calls).toContain("setup-tests finished");
    expect(calls.some((call) => call.includes("--project unit"))).toBe(false);
  });
});
