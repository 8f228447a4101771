#!/usr/bin/env bash
# The whole test suite: set-up (idempotent: scripts/setup.sh, what the main job needs, then
# scripts/setup-tests.sh, what only the tests need), type-check, lint, the unit project, the docker
# and security projects against the real engine (several files at a time), the packages built and installed as a user would (packaging), then the faults project alone (it
# restarts dockerd).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=setup.sh
source "$ROOT/scripts/setup.sh"
bash "$ROOT/scripts/setup-tests.sh"
cd "$ROOT"
echo "[test] pnpm typecheck" >&2
pnpm typecheck
echo "[test] pnpm lint" >&2
pnpm lint
echo "[test] node scripts/sync-docs.ts --check (docs' code matches the tested examples)" >&2
node scripts/sync-docs.ts --check
echo "[test] node scripts/check-cycles.ts (no import cycles)" >&2
node scripts/check-cycles.ts
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
echo "[test] vitest: docker and security projects (four files at a time)" >&2
pnpm vitest run --project docker --project security --maxWorkers=4 "${with_filter[@]}"
echo "[test] pnpm build, then the packaging project (packed tarballs installed by npm and pnpm under /tmp)" >&2
pnpm build
CODEACTION_PACKAGES_BUILT=1 pnpm vitest run --project packaging
echo "[test] vitest: faults project (restarts dockerd; runs alone)" >&2
pnpm vitest run --project faults
