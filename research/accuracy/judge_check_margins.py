#!/usr/bin/env python
"""The judge check's figures for one judge: what `localragas eval` measures before scoring (run/judge_check.py), per
verdict family and language, to set the rule's constants (MIN_AUC, MIN_MARGIN, MIN_ACCURACY, the items asked) so
the default and catalogue judges clear it with room to spare.

For each family the metrics ask (faithfulness and context recall: statements, verify_statement graded or
verify_statements with verdicts=json; context precision: chunks, judge_chunk or judge_chunks) and each language, it
prints the ROC AUC and the margin of the raw P(yes) (JSON verdicts: the accuracy), the lowest P(yes) of a supported
(relevant) item and the highest of an unsupported (irrelevant) one, the room above the rule, the items on the wrong
side, and the seconds, judge calls and tokens it took.

    python -m research.accuracy.judge_check_margins                                   # default judge qwen2.5-1.5b
    python -m research.accuracy.judge_check_margins --judge qwen2.5-0.5b --items      # every item's P(yes) too
    python -m research.accuracy.judge_check_margins --judge smollm2-135m               # the test judge (exempt in eval)
    python -m research.accuracy.judge_check_margins --judge openai:qwen --judge-option base_url=http://127.0.0.1:8080/v1
    python -m research.accuracy.judge_check_margins --metric-option faithfulness.verdicts=json \\
        --metric-option context_precision.verdicts=json                    # the JSON families
    python -m research.accuracy.judge_check_margins --statement-order ynynynynynynyn --chunk-order ynynynynn \\
        --out margins.json                                          # every item of the data

No judge cache by default, so the seconds and calls are a cold run's (the first `eval` of a judge pays them; a
re-run with the cache pays nothing); --cache-dir DIR uses one. Exit code 0 when every family passes the rule in
force (the module's constants), 1 when one does not, 2 on bad usage.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from localragas.core.atomic_write import write_atomic
from localragas.core.errors import LocalragasError
from localragas.core.key_values import comma_items, parse_metric_options, parse_options, parse_prompts
from localragas.data.language import NAMES
from localragas.judges import get_judge
from localragas.judges.calibrated import run_options
from localragas.metrics import get_metrics
from localragas.run import judge_check
from localragas.run.judging_context import run_judging

COUNTERS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "cached_tokens", "seconds")


def measure(judging, metrics: list, languages: list[str]) -> list[dict]:
    """One row per (family, language): the check's figures (judge_check.figures), every item's value, the room above
    the rule, and what the asking cost (wall seconds, the run's judge counters)."""
    rows = []
    for family in judge_check.families(metrics):
        for lang in languages:
            before, started = judging.stats.counters(), time.perf_counter()
            items, values, _ = judge_check.ask(judging, family, lang)
            wall = time.perf_counter() - started
            after = judging.stats.counters()
            got = judge_check.figures(family.kind, items, values, family.graded)
            row = {"family": family.family, "kind": family.kind, "language": lang, **got,
                   "values": [{"item": t, "expected": judge_check.SIDES[family.kind][0 if y else 1],
                               "value": round(v, 4)} for (t, y), v in zip(items, values)],
                   "wall_seconds": round(wall, 3),
                   **{k: round(after[k] - before.get(k, 0), 3) for k in COUNTERS if k in after}}
            if "auc" in got:
                row["room"] = {"auc": round(got["auc"] - judge_check.MIN_AUC, 4),
                               "margin": round(got["margin"] - judge_check.MIN_MARGIN, 4)}
            else:
                row["room"] = {"accuracy": round(got["accuracy"] - judge_check.MIN_ACCURACY, 4)}
            rows.append(row)
    return rows


def render(judge_name: str, rows: list[dict], show_items: bool) -> str:
    lines = [f"judge {judge_name}; rule: AUC >= {judge_check.MIN_AUC}, margin >= {judge_check.MIN_MARGIN} (graded), "
             f"accuracy >= {judge_check.MIN_ACCURACY} (json); statements in the order {judge_check.STATEMENT_ORDER} "
             f"and chunks in the order {judge_check.CHUNK_ORDER} (y a supported or relevant item) per language", ""]
    for r in rows:
        yes, no = judge_check.SIDES[r["kind"]]
        head = f"{r['family']} ({NAMES.get(r['language'], r['language'])}), {r['items']} items: "
        if "auc" in r:
            head += (f"AUC {r['auc']:.3f} (room {r['room']['auc']:+.3f}), margin {r['margin']:.3f} "
                     f"(room {r['room']['margin']:+.3f}); mean {yes} {r['mean_yes']:.3f}, {no} {r['mean_no']:.3f}; "
                     f"min {yes} {r['min_yes']:.3f}, max {no} {r['max_no']:.3f}")
        else:
            head += f"accuracy {r['accuracy']:.3f} (room {r['room']['accuracy']:+.3f})"
        lines.append(head + f" -> {'passed' if r['passed'] else 'FAILED'}")
        lines.append(f"  {r['wall_seconds']:.1f} s wall, {r.get('seconds', 0):.1f} s in the judge, "
                     f"{int(r.get('calls', 0))} call(s) ({int(r.get('cache_hits', 0))} from the cache), "
                     f"{int(r.get('prompt_tokens', 0))} prompt + {int(r.get('completion_tokens', 0))} generated tokens "
                     f"({int(r.get('cached_tokens', 0))} prompt tokens reused)")
        for w in r["wrong"]:
            said = f"P(yes) {w['p_yes']:.3f}" if "p_yes" in w else f"said {w['verdict']}"
            lines.append(f"  wrong: {w['item']!r} ({w['expected']}, {said})")
        if show_items:
            for v in r["values"]:
                lines.append(f"  {v['value']:.3f}  {v['expected']:<11} {v['item']}")
    total = {k: sum(r.get(k, 0) for r in rows) for k in ("wall_seconds", "calls", "prompt_tokens")}
    lines += ["", f"in all: {total['wall_seconds']:.1f} s, {int(total['calls'])} judge calls, "
                  f"{int(total['prompt_tokens'])} prompt tokens; "
                  f"{'every family passes' if all(r['passed'] for r in rows) else 'the check FAILS'}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judge", default="qwen2.5-1.5b", help="judge spec as for `localragas eval --judge`")
    ap.add_argument("--judge-option", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--metrics", action="append", default=[], metavar="NAME[,NAME]",
                    help="the metrics whose families are checked (default faithfulness,context_precision: "
                         "context_recall asks as faithfulness does)")
    ap.add_argument("--metric-option", action="append", default=[], metavar="METRIC.KEY=VALUE",
                    help="e.g. faithfulness.verdicts=json")
    ap.add_argument("--prompt", action="append", default=[], metavar="FAMILY=FILE", help="as for eval --prompt")
    ap.add_argument("--language", choices=("en", "zh", "both"), default="both")
    ap.add_argument("--statement-order", default=None, metavar="YN...",
                    help=f"the statements asked, y a supported one and n an unsupported one, each side's next in the "
                         f"data's order (default {judge_check.STATEMENT_ORDER}; the data has "
                         f"{len(judge_check.STATEMENTS['en'].statements) // 2} a side)")
    ap.add_argument("--chunk-order", default=None, metavar="YN...",
                    help=f"the chunks asked, y a relevant one and n an irrelevant one (default "
                         f"{judge_check.CHUNK_ORDER}; the data has {sum(y for _, y in judge_check.CHUNKS['en'].chunks)} "
                         f"relevant and {sum(not y for _, y in judge_check.CHUNKS['en'].chunks)} irrelevant)")
    ap.add_argument("--items", action="store_true", help="print every item's value")
    ap.add_argument("--cache-dir", type=Path, help="use this judge cache (default: none, a cold run)")
    ap.add_argument("--out", type=Path, help="write the rows as JSON here")
    args = ap.parse_args(argv)
    if args.statement_order:
        judge_check.STATEMENT_ORDER = args.statement_order
    if args.chunk_order:
        judge_check.CHUNK_ORDER = args.chunk_order
    try:
        names = comma_items(args.metrics) or ["faithfulness", "context_precision"]
        metrics = get_metrics(names, parse_metric_options(args.metric_option, "--metric-option"))
        options = parse_options(args.judge_option, "--judge-option")
        judge = get_judge(args.judge, options)
        judging = run_judging(judge, run_options(options), parse_prompts(args.prompt, "--prompt"))
        languages = ["en", "zh"] if args.language == "both" else [args.language]
        with judging.cached(args.cache_dir is not None, args.cache_dir):
            rows = measure(judging, metrics, languages)
    except LocalragasError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2
    finally:
        if "judge" in locals():
            judge.close()
    print(render(judge.name, rows, args.items))
    if args.out:
        write_atomic(args.out, json.dumps({"judge": judge.name, "rule": judge_check.rule(), "rows": rows},
                                          ensure_ascii=False, indent=1))
    return 0 if all(r["passed"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
