"""Labelled files with one statement per row, made from the benchmark files, for fitting and checking a
calibration of graded verdicts (`localragas calibrate --fit`): a row whose metric judges exactly one item gives that
item the row's label.

    .venv/bin/python -m research.accuracy.statement_rows ../shared/benchmarks/qags_faithfulness.jsonl --rows 101-197 \
        --out /tmp/qags_sentences_fit.jsonl

- A row whose `meta` has the summary's sentences and each sentence's crowd votes (QAGS: `summary_sentences`,
  `sentence_yes_votes_of_3`) becomes one row per sentence: the sentence as the answer, the same contexts, label 1
  when at least 2 of 3 workers said the article supports it, else 0 (id `<row id>#s<k>`).
- Any other row is copied as it is (BEGIN responses, WikiQA chunks: score them with `statements=sentences`, and the
  single-sentence ones are single items).

`--rows A-B` keeps rows A to B of the file (1-based, inclusive), so a calibration can be fitted on one part of a
file and checked on another. The output is written where you say, never into the package: the benchmark files'
licences allow measurement, not redistribution.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def row_range(text: str) -> tuple[int, int]:
    first, _, last = text.partition("-")
    if not (first.isdigit() and last.isdigit()) or not 1 <= int(first) <= int(last):
        raise argparse.ArgumentTypeError(f"--rows must look like A-B with 1 <= A <= B, got {text!r}")
    return int(first), int(last)


def statement_rows(row: dict) -> list[dict]:
    """The row split into one row per voted sentence, or the row itself when it has no sentence votes."""
    meta = row.get("meta") or {}
    sentences, votes = meta.get("summary_sentences"), meta.get("sentence_yes_votes_of_3")
    if not sentences or not votes or len(sentences) != len(votes):
        return [row]
    out = []
    for k, (sentence, yes) in enumerate(zip(sentences, votes), start=1):
        label = dict(row["label"], value=1 if yes >= 2 else 0)
        out.append({**row, "id": f"{row['id']}#s{k}", "answer": sentence, "label": label,
                    "meta": {"source_id": row["id"], "sentence": k, "yes_votes_of_3": yes}})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", type=Path, help="a labelled .jsonl file (e.g. ../shared/benchmarks/qags_faithfulness.jsonl)")
    ap.add_argument("--rows", type=row_range, default=None, metavar="A-B", help="rows A to B only (1-based)")
    ap.add_argument("--out", type=Path, required=True, help="the .jsonl to write")
    args = ap.parse_args(argv)
    lines = [json.loads(line) for line in args.file.read_text(encoding="utf-8").splitlines() if line.strip()]
    first, last = args.rows or (1, len(lines))
    chosen = lines[first - 1:last]
    written = [r for row in chosen for r in statement_rows(row)]
    with args.out.open("w", encoding="utf-8") as f:
        for r in written:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    positives = sum(1 for r in written if r["label"]["value"] == 1)
    print(f"{len(chosen)} rows ({first}-{first + len(chosen) - 1}) -> {len(written)} rows, {positives} labelled 1, "
          f"{len(written) - positives} labelled 0: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
