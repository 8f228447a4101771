#!/usr/bin/env bash
# The whole test suite: set-up (idempotent), type-check, lint, unit tests, and the
# Docker tests against the real engine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=setup.sh
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
echo "[test] pnpm typecheck" >&2
pnpm typecheck
echo "[test] pnpm lint" >&2
pnpm lint
echo "[test] vitest (unit and docker projects)" >&2
pnpm vitest run "$@"
