#!/usr/bin/env bash
# The signals of every dev file, one after another (one model process at a time), most useful first.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-research/verifier/out}
for f in begin_faithfulness qags_faithfulness faithfulness_faithbench context_precision_wikiqa context_recall_faithbench; do
  .venv/bin/python research/verifier/signals.py --bench "${BENCH:-../shared/benchmarks}" --out "$OUT" --files "$f.jsonl"
done
echo "all signals done"
