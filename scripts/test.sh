#!/usr/bin/env bash
# The whole test suite: set-up (idempotent), type-check, lint, the unit, docker and security
# projects against the real engine, the packages built and installed as a user would (packaging),
# then the faults project alone (it restarts dockerd).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=setup.sh
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
echo "[test] pnpm typecheck" >&2
pnpm typecheck
echo "[test] pnpm lint" >&2
pnpm lint
echo "[test] node scripts/sync-docs.ts --check (docs' code matches the tested examples)" >&2
node scripts/sync-docs.ts --check
echo "[test] node scripts/check-cycles.ts (no import cycles)" >&2
node scripts/check-cycles.ts
echo "[test] vitest: unit, docker and security projects" >&2
pnpm vitest run --project unit --project docker --project security "$@"
echo "[test] pnpm build, then the packaging project (packed tarballs installed by npm and pnpm under /tmp)" >&2
pnpm build
CODEACTION_PACKAGES_BUILT=1 pnpm vitest run --project packaging
echo "[test] vitest: faults project (restarts dockerd; runs alone)" >&2
pnpm vitest run --project faults
