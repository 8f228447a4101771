#!/usr/bin/env bash
# The main job: the analyst's question over examples/data/orders.csv, answered by a program that
# runs in the Docker sandbox. Sets the machine up first (idempotent). With OPENAI_API_KEY set the
# model is live (OPENAI_BASE_URL for a local OpenAI-compatible server); without one it plays the
# recording shipped for this question, and says so on stderr.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$ROOT/scripts/setup.sh"
cd "$ROOT"

QUESTION="What was the revenue per region in Q3 2026 (July to September)? Revenue is quantity times unit price. Sort from highest to lowest."
if [ -n "${OPENAI_API_KEY:-}" ]; then
  exec node packages/cli/bin/codeaction.js ask --csv examples/data/orders.csv "$@" "$QUESTION"
else
  exec node packages/cli/bin/codeaction.js ask --csv examples/data/orders.csv \
    --replay examples/replays/q3-revenue.json "$@" "$QUESTION"
fi
