"""Run `localragas calibrate` on every labelled file of a benchmark folder with one judge: a JSON file per benchmark
file and one Markdown table of all of them (the source of docs/accuracy.md).

    .venv/bin/python -m research.accuracy.calibrate_all --judge qwen2.5-1.5b --limit 100 \
        --out-dir calibration/qwen2.5-1.5b
    .venv/bin/python -m research.accuracy.calibrate_all --judge qwen2.5-1.5b --limit 40 --limit-for faithbench=20 ...

The judge loads once; files are scored one after another (the judge cache and per-file checkpoints make an
interrupted run resume where it stopped). A file that fails is reported and the others go on; the exit code is 1
if any failed. The benchmark files stay where they are: only figures and per-row ids, labels and scores are written.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from localragas.quality.calibration import calibrate
from localragas.quality.calibration_results import CalibrationRun
from localragas.core.errors import LocalragasError
from localragas.judges import get_judge
from localragas.core.key_values import parse_metric_options, parse_options, split_item
from localragas.report.calibration import print_calibration, write_calibration

ROOT = Path(__file__).resolve().parents[2]


def _parsed(parse, *args):
    """A localragas.core.key_values parser's result; a malformed item ends the script with the parser's message."""
    try:
        return parse(*args)
    except LocalragasError as e:
        raise SystemExit(str(e)) from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judge", required=True, help="a catalogue name, a .gguf path, BACKEND:MODEL, or fake")
    ap.add_argument("--judge-option", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--embedder", default=None, help="for answer_relevancy (default minilm-l6)")
    ap.add_argument("--limit", type=int, default=None, help="first N rows of each file (pairs kept whole)")
    ap.add_argument("--limit-for", action="append", default=[], metavar="NAME=N",
                    help="first N rows of the files whose name contains NAME, overriding --limit (repeatable)")
    ap.add_argument("--benchmarks", type=Path, default=ROOT.parent / "shared" / "benchmarks",
                    help="folder of labelled .jsonl files (default ../shared/benchmarks)")
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="only files whose name contains NAME (repeatable)")
    ap.add_argument("--metric-for", action="append", default=[], metavar="FILE=METRIC",
                    help="score FILE's labels with METRIC instead of label.metric (calibrate --metric)")
    ap.add_argument("--metric-option", action="append", default=[], metavar="METRIC.KEY=VALUE",
                    help="a metric setting, as for `localragas calibrate`, e.g. faithfulness.verdicts=json")
    ap.add_argument("--out-dir", type=Path, required=True, help="one JSON per file is written here")
    ap.add_argument("--md", type=Path, default=None, help="the Markdown table (default OUT_DIR/accuracy.md)")
    ap.add_argument("--cache-dir", type=Path, default=None, help="judge cache (default .localragas/cache)")
    ap.add_argument("--no-cache", action="store_true",
                    help="no judge cache: every reply judged anew, so s/sample is the judge's real speed")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)

    limit_for = {}
    for item in args.limit_for:
        name, n = _parsed(split_item, item, "--limit-for", "NAME=N", "faithbench=20")
        if not n.isdigit() or int(n) < 1:
            raise SystemExit(f"--limit-for: '{item}' must look like NAME=N with N >= 1")
        limit_for[name] = int(n)
    metric_options = _parsed(parse_metric_options, args.metric_option, "--metric-option")
    files = sorted(p for p in args.benchmarks.glob("*.jsonl") if not args.only or any(o in p.name for o in args.only))
    if not files:
        print(f"no .jsonl files in {args.benchmarks}", file=sys.stderr)
        return 2
    metric_for = dict(_parsed(split_item, item, "--metric-for", "FILE=METRIC") for item in args.metric_for)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    judge = get_judge(args.judge, _parsed(parse_options, args.judge_option, "--judge-option"))
    combined = CalibrationRun()
    failed: list[str] = []
    try:
        for f in files:
            started = time.perf_counter()
            print(f"== {f.name}", file=sys.stderr, flush=True)
            try:
                limit = next((n for name, n in limit_for.items() if name in f.name), args.limit)
                run = calibrate([f], judge, args.embedder, metric=metric_for.get(f.name), limit=limit,
                                cache=not args.no_cache, cache_dir=None if args.no_cache else args.cache_dir,
                                progress=not args.no_progress, metric_options=metric_options)
            except LocalragasError as e:
                print(f"   failed: {e}", file=sys.stderr)
                failed.append(f.name)
                continue
            write_calibration(run, args.out_dir / f"{f.stem}.json")
            combined.results += run.results
            limits = {**combined.meta.get("limits", {}), f.name: limit}
            combined.meta = {**run.meta, "files": [str(p) for p in files], "limits": limits,
                             # one limit for every file, else none stated (the table's rows column says it)
                             "limit": limit if len(set(limits.values())) == 1 else None}
            print(f"   {time.perf_counter() - started:.1f} s", file=sys.stderr)
    finally:
        judge.close()
    if combined.results:
        md = args.md or args.out_dir / "accuracy.md"
        write_calibration(combined, md_path=md)
        print_calibration(combined)
        print(f"wrote {args.out_dir}/*.json and {md}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
