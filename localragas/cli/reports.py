"""The commands over stored JSON reports, without judging: `report` (write a run again in other formats, gated
anew), `merge` (join the shards of one run) and `compare` (two runs, paired by sample). Added to the command group
in localragas.cli, whose one error-to-exit mapping they run through."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from .options import (EXIT_GATE_FAILED, label_files, labels_option, max_input_bytes_option, ragas_names_option,
                      regate_options, report_limit)
from .output import check_outputs, gate_exit, write_and_print
from ..quality.compare import MIN_PAIRS
from ..core.printable import printable


@click.command("report")
@click.argument("report_path", metavar="REPORT.json", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the JSON report again (with recomputed aggregates and gate) here.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), help="Write per-sample CSV here.")
@regate_options
@labels_option
@click.option("--data", "data_path", type=click.Path(dir_okay=False, path_type=Path), metavar="DATA",
              help="With --labels, for a report that keeps no sample text (eval --no-sample-text): the data file the "
                   "run was made on, whose texts the labels' item keys are checked against.")
@ragas_names_option
@max_input_bytes_option
def report_cmd(report_path, out, csv_path, html, md, junit, threshold, gate_on, no_gate, max_error_rate, labels,
               data_path, ragas_names, max_input_bytes):
    """Print REPORT.json and write it in other formats, without judging again.

    Aggregates, confidence intervals and the gate are recomputed from the per-sample results, so thresholds and
    --gate-on can be changed after the run. The gate is applied unless --no-gate is given here, also to a run made
    with --no-gate, with the thresholds, --gate-on and --max-error-rate the run recorded (eval's flags over
    localragas.toml over the defaults) under the ones given here. With --labels (people's labels on the run's items,
    `localragas review`), the report gets its spot checks and a metric with enough labels is gated on its
    prediction-powered mean (docs/spot-checks.md); without it, spot checks the report already holds are kept. Exit 0
    gate passed, 1 gate failed, 2 bad input (labels of another run too), 4 could not evaluate.

    \b
    Example:
      localragas report report.json --html report.html --md summary.md --junit junit.xml
      localragas report report.json --labels labels.jsonl
    """
    from ..run.gate import parse_thresholds  # noqa: PLC0415
    from ..report.json_stream import stream_json  # noqa: PLC0415
    from ..run.regate import regate  # noqa: PLC0415

    files = label_files(labels)
    check_outputs([report_path, *((f, "a --labels file") for f in files), (data_path, "the --data file")], out=out,
                  csv=csv_path, html=html, md=md, junit=junit)
    overrides = parse_thresholds(threshold)
    stored = stream_json(report_path, report_limit(max_input_bytes))  # a large one's samples on disk
    if files:
        from ..quality.spot_checks import read_label_files, spot_checks  # noqa: PLC0415

        block = spot_checks(stored, read_label_files(files), files=files, data_path=data_path)
        stored = stored.model_copy(update={"spot_checks": block})
    report = regate(stored, overrides=overrides, gate_on=gate_on, enabled=not no_gate, max_error_rate=max_error_rate)
    write_and_print(report, ragas_names, out=out, csv=csv_path, html=html, md=md, junit=junit)
    sys.exit(gate_exit(report))


@click.command("merge")
@click.argument("shard_paths", metavar="SHARD.json...", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the merged JSON report here.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), help="Write per-sample CSV here.")
@regate_options
@labels_option
@max_input_bytes_option
def merge_cmd(shard_paths, out, csv_path, html, md, junit, threshold, gate_on, no_gate, max_error_rate, labels,
              max_input_bytes):
    """Join the JSON reports of `eval --shard 1/N` … `N/N` into one report: samples in dataset order, aggregates,
    intervals and gate computed over all of them, as an unsharded run would. Refuses shards of different runs
    (judge, metrics, thresholds, dataset) and a missing or repeated shard.

    The gate is applied unless --no-gate is given here, also to shards run with --no-gate (as the recipes in
    docs/scale-out.md do), with the thresholds, --gate-on and --max-error-rate the shards recorded (eval's flags
    over localragas.toml over the defaults) under the ones given here. The shards' spot checks (people's labels) are
    not merged: give the labels again with --labels to check the merged run (each shard's labels are items of it);
    without them the merged report says it dropped them. Exit codes as for `eval`: 0 gate passed, 1 gate failed,
    2 bad input (labels of another run too), 4 could not evaluate.

    \b
    Example:
      localragas merge shard-*.json --out report.json --html report.html --junit junit.xml
      localragas merge shard-*.json --labels labels.jsonl --out report.json
    """
    from ..run.gate import parse_thresholds  # noqa: PLC0415
    from ..report.json_stream import stream_json  # noqa: PLC0415
    from ..run.shard import merge  # noqa: PLC0415

    check_outputs(shard_paths, out=out, csv=csv_path, html=html, md=md, junit=junit)
    overrides = parse_thresholds(threshold)
    shards = [stream_json(p, report_limit(max_input_bytes)) for p in shard_paths]
    checked = sum(1 for r in shards if r.spot_checks is not None and r.spot_checks.metrics)
    gating = {"overrides": overrides, "gate_on": gate_on, "enabled": not no_gate, "max_error_rate": max_error_rate}
    report = merge(shards, **gating)
    if files := label_files(labels):
        from ..quality.spot_checks import read_label_files, with_spot_checks  # noqa: PLC0415

        report = with_spot_checks(report, read_label_files(files), files=files, **gating)
    elif checked:
        click.echo(f"note: {checked} shard(s) carried people's spot checks; they are not merged (each covers its own "
                   "shard's items): give the labels again with --labels to check the merged run", err=True)
    write_and_print(report, out=out, csv=csv_path, html=html, md=md, junit=junit)
    sys.exit(gate_exit(report))


@click.command("compare")
@click.argument("base_path", metavar="BASE.json", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("new_path", metavar="NEW.json", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--fail-on-regression", is_flag=True,
              help="Exit 1 when a metric regressed beyond noise; exit 9 (refused) when a metric has fewer pairs than "
                   "--min-pairs (no sample id in common, most of all); exit 7 (refused) when the runs did not "
                   "measure the same way, unless --allow-method-change.")
@click.option("--min-pairs", type=click.IntRange(min=2), default=MIN_PAIRS, show_default=True, metavar="N",
              help="The fewest samples scored in both runs a metric's change is judged on: fewer, and it is "
                   "undecided (not comparable), which --fail-on-regression refuses (exit 9). Below 10 pairs the "
                   "95%% interval holds the true change far less often than 95%% (docs/reports.md).")
@click.option("--allow-method-change", is_flag=True,
              help="With --fail-on-regression: gate on the changes even though the metric options, judge, "
                   "calibration, prompts or embedder differ (the changes then mix the RAG system's with the method's).")
@click.option("--top", type=click.IntRange(min=0), default=5, show_default=True,
              help="How many most-changed samples to list per metric.")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the comparison as JSON here.")
@click.option("--md", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the comparison as Markdown (for a pull-request comment) here.")
@click.option("--html", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the comparison as a self-contained HTML page here: each metric's paired difference with its "
                   "interval, drawn (SVG, offline).")
@max_input_bytes_option
def compare_cmd(base_path, new_path, fail_on_regression, allow_method_change, min_pairs, top, out, md, html,
                max_input_bytes):
    """Compare two JSON reports: each metric's change over samples paired by id, with a 95% paired bootstrap
    interval and a verdict (improved / regressed / within noise; undecided over fewer than --min-pairs pairs). First,
    whether the two runs measured the same way (metrics and their options, judge, calibration, prompts, embedder,
    gate): where they did not, the differences are named and a change is not called the RAG system's. Exit 0, 1 a
    metric regressed (--fail-on-regression), 2 bad input, 7 the method changed (--fail-on-regression without
    --allow-method-change), 9 too few pairs to decide (--fail-on-regression; it wins over 1).

    \b
    Example:
      localragas compare main.json branch.json --fail-on-regression --md compare.md
    """
    from ..quality.compare import check_enough_pairs, check_same_method, compare_reports  # noqa: PLC0415
    from ..report import read_json  # noqa: PLC0415
    from ..report.comparison import print_comparison, write_comparison  # noqa: PLC0415

    check_outputs([base_path, new_path], out=out, md=md, html=html)
    limit = report_limit(max_input_bytes)
    base, new = read_json(base_path, limit), read_json(new_path, limit)
    result = compare_reports(base, new, str(base_path), str(new_path), top=top, min_pairs=min_pairs)
    print_comparison(result)
    write_comparison(result, out, md, html)
    if out or md or html:
        click.echo("wrote " + printable(", ".join(str(p) for p in (out, md, html) if p)))
    if fail_on_regression and not allow_method_change:
        check_same_method(result)
    if fail_on_regression:
        check_enough_pairs(result)
    sys.exit(EXIT_GATE_FAILED if fail_on_regression and result.regressed else 0)
