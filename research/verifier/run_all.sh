#!/usr/bin/env bash
# The signals of every dev file, one after another (one model process at a time): first 100 rows of each
# faithfulness file (enough for a first leave-one-source-out figure), then the chunks, then the rest of every file.
# Resumable: a row already written is skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-research/verifier/out}
run() { .venv/bin/python -m research.verifier.signals --bench "${BENCH:-../shared/benchmarks}" --out "$OUT" "$@"; }
for f in begin_faithfulness qags_faithfulness faithfulness_faithbench; do run --files "$f.jsonl" --limit 100; done
run --files context_precision_wikiqa.jsonl
for f in begin_faithfulness qags_faithfulness faithfulness_faithbench context_recall_faithbench; do run --files "$f.jsonl"; done
echo "all signals done"
