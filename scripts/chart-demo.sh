#!/usr/bin/env bash
# The analyst's chart: revenue per region in Q3 2026 over examples/data/orders.csv, drawn with
# matplotlib in the data image and brought back from /workspace/out as a PNG
# (./codeaction-out/<runId>/q3-revenue.png; its path is printed on stderr). Sets the machine up first.
# With OPENAI_API_KEY set the model is live; without one it plays the recording for this question.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$ROOT/scripts/setup.sh"
cd "$ROOT"

QUESTION="Chart the revenue per region in Q3 2026 (July to September) as a bar chart PNG, and give the totals. Revenue is quantity times unit price."
REPLAY=()
[ -n "${OPENAI_API_KEY:-}" ] || REPLAY=(--replay examples/replays/q3-revenue-chart.json)
exec node packages/cli/bin/codeaction.js ask --data --csv examples/data/orders.csv "${REPLAY[@]}" "$@" "$QUESTION"
