#!/usr/bin/env bash
# The whole test suite: set-up (idempotent: scripts/setup.sh, what the main job needs, then
# scripts/setup-tests.sh, what only the tests need), type-check, lint, the unit project, the docker
# and security projects against the real engine (several files at a time), the packages built and
# installed as a user would (packaging), then the faults project alone (it restarts dockerd).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=setup.sh
source "$ROOT/scripts/setup.sh"
cd "$ROOT"

# What only the tests need (Debian packages, the data and proxy images: minutes on a fresh machine)
# is first used by the docker project. The type-check, lint, the script checks and the unit project
# use none of it (nor Docker), so scripts/setup-tests.sh runs in the background meanwhile, its output
# in a log that is shown when it is waited for. If it fails, the test command fails there, with that
# log. If this script stops before (a check failed), it still waits for the set-up to finish rather
# than leave apt-get running alone.
tests_setup_log="$ROOT/.tools/setup-tests.log"
echo "[test] scripts/setup-tests.sh in the background (log: .tools/setup-tests.log)" >&2
bash "$ROOT/scripts/setup-tests.sh" >"$tests_setup_log" 2>&1 </dev/null &
tests_setup_pid=$!
tests_setup_waited=""
on_exit() {
  if [ -z "$tests_setup_waited" ]; then
    echo "[test] waiting for scripts/setup-tests.sh to finish before exiting (log: $tests_setup_log)" >&2
    wait "$tests_setup_pid" || true
  fi
}
trap on_exit EXIT
wait_for_tests_setup() {
  local status=0
  echo "[test] waiting for scripts/setup-tests.sh (started in the background)" >&2
  wait "$tests_setup_pid" || status=$?
  tests_setup_waited=1
  cat "$tests_setup_log" >&2
  if [ "$status" != 0 ]; then
    echo "[test] scripts/setup-tests.sh failed (exit $status): its output is above (and in $tests_setup_log)" >&2
    exit "$status"
  fi
}

echo "[test] pnpm typecheck" >&2
pnpm typecheck
echo "[test] pnpm lint" >&2
pnpm lint
echo "[test] node scripts/sync-docs.ts --check (docs' code matches the tested examples)" >&2
node scripts/sync-docs.ts --check
echo "[test] node scripts/check-cycles.ts (no import cycles)" >&2
node scripts/check-cycles.ts
echo "[test] node scripts/check-cli-boundary.ts (the CLI uses @codeaction/core's public API only)" >&2
node scripts/check-cli-boundary.ts
echo "[test] node scripts/file-lengths.ts and scripts/function-lengths.ts --check (400 lines a file, 60 a function)" >&2
node scripts/file-lengths.ts
node scripts/function-lengths.ts --check
echo "[test] node scripts/check-timing-assertions.ts (no wall-clock assertions outside bench/)" >&2
node scripts/check-timing-assertions.ts
# Vitest 3 runs cpus - 1 files at a time by default: ONE on a two-core machine, so the suite ran one
# file after another. The command line's --maxWorkers is the only pool size Vitest 3 honours
# (vitest.config.ts says why), hence one invocation per setting. Measured on the two-core machine
# (CONTRIBUTING.md, "How the suite runs"): the unit files are CPU-bound, two at a time; the docker and
# security files mostly wait on containers, four at a time halves their wall time.
# Arguments (a file filter) go to both invocations; either may then find no file of its own.
with_filter=()
if [ "$#" -gt 0 ]; then with_filter=(--passWithNoTests "$@"); fi
echo "[test] vitest: unit project (two files at a time)" >&2
pnpm vitest run --project unit --maxWorkers=2 "${with_filter[@]}"
wait_for_tests_setup
echo "[test] node scripts/check-python.ts (the packages' Python, linted with pyflakes)" >&2
node scripts/check-python.ts
echo "[test] vitest: docker and security projects (four files at a time, slowest first)" >&2
pnpm vitest run --project docker --project security --maxWorkers=4 "${with_filter[@]}"
echo "[test] pnpm build, then the packaging project (packed tarballs installed by npm and pnpm under /tmp, two files at a time)" >&2
pnpm build
CODEACTION_PACKAGES_BUILT=1 pnpm vitest run --project packaging --maxWorkers=2
echo "[test] vitest: faults project (restarts dockerd; runs alone)" >&2
pnpm vitest run --project faults
