"""The command line: a thin layer over the library.

Exit codes: 0 gate passed, 1 gate failed, 2 bad usage or input, 3 internal error (a bug: the traceback is printed),
4 could not evaluate (errors left samples unscored beyond --max-error-rate: the gate fails closed; generate: a judge
error stopped the run; run-rag: some rows failed).
"""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from . import __version__
from .cli_generate import generate_cmd, run_rag_cmd
from .cli_inventory import cache_group, metrics_cmd, models_group
from .cli_options import (EXIT_BAD_INPUT, EXIT_GATE_FAILED, EXIT_INTERNAL_ERROR,  # noqa: F401 - tests import them
                          EXIT_NOT_EVALUATED, model_options as _model_options)
from .errors import LocalragasError, environment_message
from .inputs import DEFAULT_MAX_INPUT_BYTES
from .printable import printable
from .gate import GATE_ON


def _gate_exit(report) -> int:
    """4 when a metric could not be evaluated (even if another failed), else 1 when the gate failed, else 0."""
    if not report.gate.evaluated:
        return EXIT_NOT_EVALUATED
    return 0 if report.gate.passed else EXIT_GATE_FAILED


def _errors_to_exit(fn):
    """LocalragasError -> a one-line message and exit code 2; an OSError (permission, missing folder, read-only file
    system, full disk…) -> the path, the problem and what to do, exit code 2; any other exception (a bug) -> its
    traceback and exit code 3. The only place errors become exit codes: every command runs through it (_Main)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LocalragasError as e:
            click.echo(f"Error: {printable(e)}", err=True)  # messages quote data: ids, paths, judge replies
            sys.exit(EXIT_BAD_INPUT)
        except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit, BrokenPipeError):
            raise  # click's own: usage errors exit 2, a closed stdout is handled by click
        except OSError as e:
            click.echo(f"Error: {printable(environment_message(e))}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except Exception as e:  # noqa: BLE001 - a bug must not look like a failed gate (exit 1)
            import traceback  # noqa: PLC0415

            click.echo(printable(traceback.format_exc(), newlines=True), err=True, nl=False)
            click.echo(f"Error: internal error {type(e).__name__}: {printable(e)} (a bug in localragas; the traceback "
                       "is above; finished samples are kept in the resume checkpoint)", err=True)
            sys.exit(EXIT_INTERNAL_ERROR)

    return wrapper


def _check_outputs(inputs, **outputs) -> None:
    """Refuse bad output paths before any judging (an input, a folder, one file for two outputs, unwritable)."""
    from .report.destinations import check_outputs  # noqa: PLC0415

    check_outputs({f"--{k}": v for k, v in outputs.items()}, [Path(p) for p in inputs if p])


def _format_options(fn):
    """--html, --md and --junit: the report formats shared by `eval` and `report`."""
    fn = click.option("--junit", type=click.Path(dir_okay=False, path_type=Path),
                      help="Write JUnit XML here: each metric's gate is a test case.")(fn)
    fn = click.option("--md", type=click.Path(dir_okay=False, path_type=Path),
                      help="Write a Markdown summary (for a pull-request comment) here.")(fn)
    return click.option("--html", type=click.Path(dir_okay=False, path_type=Path),
                        help="Write a self-contained HTML report (works offline) here.")(fn)


def _write_and_print(report, ragas_names: bool = False, **paths) -> None:
    """Write each requested format, print the terminal report, and list what was written.

    ragas_names: the JSON and CSV files name the metrics as ragas does (localragas.ragas_compat.RAGAS_NAMES)."""
    from . import report as fmt  # noqa: PLC0415

    writers = {"out": fmt.write_json, "csv": fmt.write_csv, "md": fmt.write_markdown, "junit": fmt.write_junit}
    renamed = None
    for key, path in paths.items():
        if path is None:
            continue
        if key == "html":
            from .report.html_report import write_html  # noqa: PLC0415

            write_html(report, path)
        elif ragas_names and key in ("out", "csv"):
            from .ragas_compat import to_ragas_names  # noqa: PLC0415

            renamed = renamed or to_ragas_names(report)
            writers[key](renamed, path)
        else:
            writers[key](report, path)
    fmt.print_report(report)
    written = [str(p) for p in paths.values() if p]
    if written:
        click.echo("wrote " + printable(", ".join(written)))


class _Main(click.Group):
    """The command group: every command, in every subgroup, runs through the one error-to-exit mapping."""

    def invoke(self, ctx: click.Context):
        return _errors_to_exit(super().invoke)(ctx)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="localragas")
def main() -> None:
    """Score RAG outputs with the RAGAS metrics, fully offline, with a local judge model."""


for _command in (metrics_cmd, cache_group, models_group,  # localragas/cli_inventory.py
                 generate_cmd, run_rag_cmd):  # localragas/cli_generate.py
    main.add_command(_command)


_max_error_rate_option = click.option(
    "--max-error-rate", type=click.FloatRange(0, 1), default=None, metavar="R",
    help="Share (0..1) of each metric's samples an error (judge, embedder, I/O) may leave unscored; beyond it, or "
         "with no scored sample, the metric could not be evaluated: exit 4. Default 0.")

# The gate's options, the same on eval, report and merge (report and merge gate a run made with --no-gate).
_threshold_option = click.option(
    "--threshold", "-t", multiple=True, metavar="METRIC=VALUE",
    help="Gate threshold, e.g. faithfulness=0.85, over the default (report, merge: over the run's own). Repeatable.")

_no_gate_option = click.option(
    "--no-gate", is_flag=True,
    help="Report scores only; exit 0 unless the input is bad or a metric could not be evaluated (4).")

_gate_on_option = click.option(
    "--gate-on", type=click.Choice(GATE_ON), default=None,
    help="Hold the mean (default) or the 95% CI lower bound of each metric against its threshold (report, merge: "
         "default the run's own).")

_max_input_bytes_option = click.option(
    "--max-input-bytes", type=click.IntRange(min=1), default=None, metavar="BYTES",
    help="Refuse an input file larger than this (default 4294967296, 4 GiB); a FIFO or device is always refused.")


_prompt_option = click.option(
    "--prompt", multiple=True, metavar="FAMILY=FILE",
    help="Replace a prompt family's instruction text with FILE's, e.g. verify_statement=instruction.txt (the data "
         "layout and reply format stay; docs/custom-metrics.md). Repeatable; over the settings file's [prompts].")


def _report_limit(max_input_bytes: int | None) -> int:
    """--max-input-bytes of `report`, `merge` and `compare` (which read no settings file), else the default."""
    return DEFAULT_MAX_INPUT_BYTES if max_input_bytes is None else max_input_bytes


_ragas_names_option = click.option(
    "--ragas-names", is_flag=True,
    help="Name the metrics in the JSON and CSV files as ragas does, e.g. factual_correctness(mode=f1).")


@main.command("eval")
@click.argument("data", type=click.Path(path_type=Path))
@click.option("--metrics", "-m", multiple=True, metavar="NAME[,NAME]",
              help="Metrics to compute (default: the four RAGAS core metrics). Repeat or comma-separate. "
                   "See `localragas metrics`.")
@click.option("--metric-option", multiple=True, metavar="METRIC.KEY=VALUE",
              help="A metric setting, e.g. answer_correctness.weights=0.5,0.5 or factual_correctness.beta=2. "
                   "Repeatable.")
@click.option("--language", type=click.Choice(("auto", "en", "zh")), default=None,
              help="Language of the judge's prompts: auto (default: each sample's own, from its script), en or zh.")
@_ragas_names_option
@_model_options
@_threshold_option
@_no_gate_option
@_max_error_rate_option
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the full JSON report (scores, evidence, run metadata) here.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write per-sample scores as CSV here.")
@_format_options
@_gate_on_option
@click.option("--limit", "-n", type=click.IntRange(min=1), help="Evaluate only the first N samples.")
@click.option("--shard", metavar="I/N",
              help="Evaluate shard I of N (every N-th sample, from the I-th); join the shard reports with "
                   "`localragas merge`.")
@click.option("--skip-invalid", is_flag=True, help="Record invalid rows as skipped and go on, instead of stopping.")
@click.option("--columns", multiple=True, metavar="FIELD=COLUMN[,FIELD=COLUMN]",
              help="Read a field from a column of another name, e.g. question=query,answer=response. Repeatable.")
@_max_input_bytes_option
@click.option("--concurrency", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="Samples judged at once, for a judge server with parallel slots (--judge openai:MODEL). "
                   "In-process judges run one at a time.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./localragas.toml, else [tool.localragas] in ./pyproject.toml).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show progress on stderr.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Persistent judge cache folder (default .localragas/cache, or $LOCALRAGAS_STATE_DIR/cache): "
                   "a re-run of the same command makes no judge call.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the judge cache.")
@click.option("--resume/--no-resume", default=True, show_default=True,
              help="Keep each finished sample in a checkpoint under .localragas/runs; after a crash or kill, the "
                   "same command skips the finished samples. The checkpoint is removed when the run completes.")
@_prompt_option
def eval_cmd(data, metrics, metric_option, language, ragas_names, judge, judge_option, embedder, threshold, no_gate,
             max_error_rate, out, csv_path, html, md, junit, gate_on, limit, shard, skip_invalid, columns,
             max_input_bytes, concurrency, config_path, progress, cache_dir, no_cache, resume, prompt):
    """Evaluate the samples in DATA (.jsonl, .json, .csv, .parquet, or a folder written by the datasets package's
    save_to_disk; ragas column names are read too) and apply the quality gate.

    \b
    Example:
      localragas eval examples/rag_samples.jsonl --out report.json --csv scores.csv
    """
    from .evaluation import Evaluation, spec_from_flags  # noqa: PLC0415

    spec = spec_from_flags(
        data, config=config_path, metrics=metrics, metric_option=metric_option, language=language, judge=judge,
        judge_option=judge_option, embedder=embedder, threshold=threshold, no_gate=no_gate, gate_on=gate_on,
        max_error_rate=max_error_rate, limit=limit, shard=shard, skip_invalid=skip_invalid, columns=columns,
        max_input_bytes=max_input_bytes, concurrency=concurrency, progress=progress, cache_dir=cache_dir,
        no_cache=no_cache, resume=resume, prompt=prompt)
    _check_outputs([data, spec.config, spec.cache_folder()], out=out, csv=csv_path, html=html, md=md, junit=junit)
    run = Evaluation(spec)
    report = run.run()
    if report.meta["resumed_samples"]:
        click.echo(f"resumed: {report.meta['resumed_samples']} finished sample(s) taken from "
                   f"{printable(run.checkpoint.path)}", err=True)
    _write_and_print(report, ragas_names, out=out, csv=csv_path, html=html, md=md, junit=junit)
    run.finish()  # the run is complete and its reports are written
    sys.exit(_gate_exit(report))


@main.command("report")
@click.argument("report_path", metavar="REPORT.json", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the JSON report again (with recomputed aggregates and gate) here.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), help="Write per-sample CSV here.")
@_format_options
@_threshold_option
@_gate_on_option
@_no_gate_option
@_max_error_rate_option
@_ragas_names_option
@_max_input_bytes_option
def report_cmd(report_path, out, csv_path, html, md, junit, threshold, gate_on, no_gate, max_error_rate, ragas_names,
               max_input_bytes):
    """Print REPORT.json and write it in other formats, without judging again.

    Aggregates, confidence intervals and the gate are recomputed from the per-sample results, so thresholds and
    --gate-on can be changed after the run. The gate is applied unless --no-gate is given here, also to a run made
    with --no-gate, with the thresholds, --gate-on and --max-error-rate the run recorded (eval's flags over
    localragas.toml over the defaults) under the ones given here. Exit 0 gate passed, 1 gate failed, 2 bad input,
    4 could not evaluate.

    \b
    Example:
      localragas report report.json --html report.html --md summary.md --junit junit.xml
    """
    from .gate import parse_thresholds  # noqa: PLC0415
    from .report import read_json  # noqa: PLC0415
    from .runner import regate  # noqa: PLC0415

    _check_outputs([report_path], out=out, csv=csv_path, html=html, md=md, junit=junit)
    overrides = parse_thresholds(threshold)
    stored = read_json(report_path, _report_limit(max_input_bytes))
    report = regate(stored, overrides=overrides, gate_on=gate_on, enabled=not no_gate, max_error_rate=max_error_rate)
    _write_and_print(report, ragas_names, out=out, csv=csv_path, html=html, md=md, junit=junit)
    sys.exit(_gate_exit(report))


@main.command("merge")
@click.argument("shard_paths", metavar="SHARD.json...", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the merged JSON report here.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), help="Write per-sample CSV here.")
@_format_options
@_threshold_option
@_gate_on_option
@_no_gate_option
@_max_error_rate_option
@_max_input_bytes_option
def merge_cmd(shard_paths, out, csv_path, html, md, junit, threshold, gate_on, no_gate, max_error_rate,
              max_input_bytes):
    """Join the JSON reports of `eval --shard 1/N` … `N/N` into one report: samples in dataset order, aggregates,
    intervals and gate computed over all of them, as an unsharded run would. Refuses shards of different runs
    (judge, metrics, thresholds, dataset) and a missing or repeated shard.

    The gate is applied unless --no-gate is given here, also to shards run with --no-gate (as the recipes in
    docs/scale-out.md do), with the thresholds, --gate-on and --max-error-rate the shards recorded (eval's flags
    over localragas.toml over the defaults) under the ones given here. Exit codes as for `eval`: 0 gate passed,
    1 gate failed, 2 bad input, 4 could not evaluate.

    \b
    Example:
      localragas merge shard-*.json --out report.json --html report.html --junit junit.xml
    """
    from .gate import parse_thresholds  # noqa: PLC0415
    from .report import read_json  # noqa: PLC0415
    from .shard import merge  # noqa: PLC0415

    _check_outputs(shard_paths, out=out, csv=csv_path, html=html, md=md, junit=junit)
    overrides = parse_thresholds(threshold)
    report = merge([read_json(p, _report_limit(max_input_bytes)) for p in shard_paths], overrides=overrides,
                   gate_on=gate_on, enabled=not no_gate, max_error_rate=max_error_rate)
    _write_and_print(report, out=out, csv=csv_path, html=html, md=md, junit=junit)
    sys.exit(_gate_exit(report))


@main.command("compare")
@click.argument("base_path", metavar="BASE.json", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("new_path", metavar="NEW.json", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when a metric regressed beyond noise.")
@click.option("--top", type=click.IntRange(min=0), default=5, show_default=True,
              help="How many most-changed samples to list per metric.")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the comparison as JSON here.")
@click.option("--md", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the comparison as Markdown (for a pull-request comment) here.")
@_max_input_bytes_option
def compare_cmd(base_path, new_path, fail_on_regression, top, out, md, max_input_bytes):
    """Compare two JSON reports: each metric's change over samples paired by id, with a 95% paired bootstrap
    interval and a verdict (improved / regressed / within noise).

    \b
    Example:
      localragas compare main.json branch.json --fail-on-regression --md compare.md
    """
    from .compare import compare_reports  # noqa: PLC0415
    from .report import read_json  # noqa: PLC0415
    from .report.comparison import print_comparison, write_comparison  # noqa: PLC0415

    _check_outputs([base_path, new_path], out=out, md=md)
    limit = _report_limit(max_input_bytes)
    base, new = read_json(base_path, limit), read_json(new_path, limit)
    result = compare_reports(base, new, str(base_path), str(new_path), top=top)
    print_comparison(result)
    write_comparison(result, out, md)
    if out or md:
        click.echo("wrote " + printable(", ".join(str(p) for p in (out, md) if p)))
    sys.exit(EXIT_GATE_FAILED if fail_on_regression and result.regressed else 0)


@main.command("calibrate")
@click.argument("files", metavar="LABELLED.jsonl...", nargs=-1, required=True,
                type=click.Path(dir_okay=False, path_type=Path))
@_model_options
@click.option("--threshold", "-t", multiple=True, metavar="METRIC=VALUE",
              help="Gate threshold for the binary figures 'at the gate', e.g. faithfulness=0.85. Repeatable.")
@click.option("--metric", "-m", metavar="NAME",
              help="Score every row with this metric instead of its label's (label.metric is kept in the output).")
@click.option("--metric-option", multiple=True, metavar="METRIC.KEY=VALUE",
              help="A metric setting, as for eval, e.g. faithfulness.verdicts=json (the RAGAS-style verdicts). "
                   "Repeatable.")
@click.option("--limit", "-n", type=click.IntRange(min=1),
              help="Only the first N rows of each file (pairwise files: whole pairs, so up to N+1 rows).")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the calibration as JSON here (figures, intervals, and every row's label and score).")
@click.option("--md", type=click.Path(dir_okay=False, path_type=Path), help="Write a Markdown table here.")
@click.option("--fit", "fit_path", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Fit a calibration map to the binary-labelled single-item rows (from the judge's raw P(yes)) and "
                   "write it here, for --judge-option calibration=FILE (docs/calibration.md).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show progress on stderr.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Persistent judge cache folder (default .localragas/cache, or $LOCALRAGAS_STATE_DIR/cache).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the judge cache.")
@click.option("--resume/--no-resume", default=True, show_default=True,
              help="Keep finished rows in a checkpoint under .localragas/runs, as `eval` does.")
@click.option("--columns", multiple=True, metavar="FIELD=COLUMN[,FIELD=COLUMN]",
              help="Read a sample field from a column of another name, e.g. question=query. Repeatable.")
@_max_input_bytes_option
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./localragas.toml, else [tool.localragas] in ./pyproject.toml): its judge, "
                   "judge_options, embedder, thresholds, metric_options and max_input_bytes, under the flags.")
@_prompt_option
def calibrate_cmd(files, judge, judge_option, embedder, threshold, metric, metric_option, limit, out, md, fit_path,
                  progress, cache_dir, no_cache, resume, columns, max_input_bytes, config_path, prompt):
    """Measure how well a metric agrees with human labels in LABELLED files (rows with label: {metric, value,
    kind}): binary labels give ROC AUC and balanced accuracy at the gate and at the best threshold (suggested as
    the gate threshold); graded labels Spearman correlation and mean absolute error; pairwise labels the fraction
    of pairs ordered as the humans ordered them (ties count half). Each with a 95% bootstrap CI, over the scored
    rows and with unscored rows counted wrong. --fit FILE also fits and writes a calibration map. Exit 0, or 2 on bad
    input (or a fit that cannot be made).

    \b
    Example:
      localragas calibrate labelled.jsonl --judge qwen2.5-1.5b --limit 100 --out calib.json --md calib.md
      localragas calibrate sentences.jsonl --fit my-judge.calibration.json
    """
    from .calibration import calibrate  # noqa: PLC0415
    from .config import load_settings  # noqa: PLC0415
    from .evaluation import cache_folder, layered  # noqa: PLC0415
    from .judges import get_judge  # noqa: PLC0415
    from .key_values import parse_columns  # noqa: PLC0415
    from .labelled import read_labelled  # noqa: PLC0415
    from .metrics import get_metrics  # noqa: PLC0415
    from .report.calibration import print_calibration, write_calibration  # noqa: PLC0415
    from .runner import set_prompts  # noqa: PLC0415

    settings = load_settings(config_path)
    chosen = layered(settings, judge=judge, judge_option=judge_option, embedder=embedder, threshold=threshold,
                     metric_option=metric_option, max_input_bytes=max_input_bytes, prompt=prompt)
    _check_outputs([*files, settings.source, cache_folder(not no_cache, cache_dir)], out=out, md=md, fit=fit_path)
    metric_options = chosen["metric_options"]
    if metric:
        get_metrics([metric])
    for name, opts in metric_options.items():
        get_metrics([name], {name: opts})  # a bad option is refused before a model loads
    column_map = parse_columns(columns, "--columns")  # not the config file's [columns]: eval's data's columns
    sources = [read_labelled(f, any_metric=bool(metric), max_input_bytes=chosen["max_input_bytes"],
                             columns=column_map) for f in files]  # refused before a model loads
    judge_obj = get_judge(chosen["judge"], chosen["judge_options"])
    try:
        set_prompts(judge_obj, chosen["prompts"])
        run = calibrate(sources, judge_obj, chosen["embedder"], metric=metric, limit=limit,
                        thresholds=chosen["thresholds"], cache=not no_cache, cache_dir=None if no_cache else cache_dir,
                        resume=resume, progress=progress, metric_options=metric_options)
    finally:
        judge_obj.close()
    write_calibration(run, out, md, fit=bool(fit_path))
    print_calibration(run, fit=bool(fit_path))
    if fit_path:
        from .calibration_fit import fit_calibration  # noqa: PLC0415

        fitted, fits = fit_calibration(run, judge_obj)
        fitted.write(fit_path)
        for f in fits:
            click.echo("fitted " + printable(f.text()))
    if out or md or fit_path:
        click.echo("wrote " + printable(", ".join(str(p) for p in (out, md, fit_path) if p)))
    sys.exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()
