"""`localragas calibrate`: how well a metric agrees with human labels (localragas.quality.calibration), and with --fit a
calibration map fitted (localragas.quality.calibration_fit). Added to the command group in localragas.cli, whose one
error-to-exit mapping it runs through."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from .options import setting_option, setting_options
from .output import check_outputs
from ..core.printable import printable


@click.command("calibrate")
@click.argument("files", metavar="LABELLED.jsonl...", nargs=-1,
                type=click.Path(dir_okay=False, path_type=Path))
@setting_options("judge", "judge_options", "embedder")
@setting_option("thresholds", help="Gate threshold for the binary figures 'at the gate', e.g. faithfulness=0.85. "
                                   "Repeatable.")
@click.option("--metric", "-m", metavar="NAME",
              help="Score every row with this metric instead of its label's (label.metric is kept in the output).")
@setting_option("metric_options", help="A metric setting, as for eval, e.g. faithfulness.verdicts=json (the "
                                       "RAGAS-style verdicts). Repeatable.")
@setting_option("limit", help="Only the first N rows of each file (pairwise files: whole pairs, so up to N+1 rows).")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the calibration as JSON here (figures, intervals, and every row's label and score).")
@click.option("--md", type=click.Path(dir_okay=False, path_type=Path), help="Write a Markdown table here.")
@click.option("--html", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a self-contained HTML page of plots here: the ROC curve, the reliability diagram of the "
                   "scale, the scores' histogram per human label and the suggested threshold (inline SVG, offline).")
@click.option("--fit", "fit_path", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Fit a calibration map to the binary-labelled single-item rows (from the judge's raw P(yes)) and "
                   "write it here, for --judge-option calibration=FILE (docs/calibration.md).")
@click.option("--family", metavar="FAMILY",
              help="With --fit: fit this prompt family instead of the metrics' and add it to FILE, its other families "
                   "kept. question_answerable: generate's answerability check, each row's question and contexts "
                   "against its binary label (docs/calibration.md).")
@click.option("--labels", "labels_files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              metavar="LABELS.jsonl", help="With --fit and --report: fit from people's labels of the run's items "
                                           "(localragas review) instead of LABELLED files, cross-fitted; no judge "
                                           "call. Repeatable (docs/spot-checks.md).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), metavar="RUN.json",
              help="With --fit and --labels: the JSON report of the run the labels were made on.")
@click.option("--data", "data_path", type=click.Path(dir_okay=False, path_type=Path), metavar="DATA",
              help="With --report, for a report that keeps no sample text (eval --no-sample-text): the data file the "
                   "run was made on, whose texts the labels' item keys are checked against.")
@setting_option("progress")
@setting_option("cache_dir", help="Persistent judge cache folder (default .localragas/cache, or "
                                  "$LOCALRAGAS_STATE_DIR/cache).")
@setting_option("cache")
@setting_option("resume", help="Keep finished rows in a checkpoint under .localragas/runs, as `eval` does.")
@setting_option("columns", help="Read a sample field from a column of another name, e.g. question=query. Repeatable.")
@setting_option("max_input_bytes")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./localragas.toml, else [tool.localragas] in ./pyproject.toml): its judge, "
                   "judge_options, embedder, thresholds, metric_options and max_input_bytes, under the flags.")
@setting_option("prompts")
def calibrate_cmd(files, metric, out, md, html, fit_path, family, config_path, labels_files, report_path, data_path,
                  **flags):
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
      localragas calibrate wikiqa.jsonl --fit my-judge.calibration.json --family question_answerable
      localragas calibrate --fit my.calibration.json --labels labels.jsonl --report run.json
    """
    from ..quality.calibration import FROM_FILE, calibrate  # noqa: PLC0415
    from ..run.config import load_settings  # noqa: PLC0415
    from ..run.settings import RunSettings, from_flags, register_custom_metrics  # noqa: PLC0415
    from ..judges import get_judge  # noqa: PLC0415
    from ..quality.labelled import read_labelled  # noqa: PLC0415
    from ..metrics import get_metrics  # noqa: PLC0415
    from ..report.calibration import print_calibration, write_calibration  # noqa: PLC0415
    from ..judges.calibrated import run_options  # noqa: PLC0415
    from ..run.files_read import files_read  # noqa: PLC0415

    if labels_files or report_path or data_path:
        _fit_labels(labels_files, report_path, data_path, fit_path=fit_path, files=files, refused=(
            ("--metric", metric), ("--family", family), ("--out", out), ("--md", md), ("--html", html)))
        sys.exit(0)
    if not files:
        raise click.UsageError("Missing argument 'LABELLED.jsonl...' (or --fit FILE --labels LABELS --report RUN).")
    file = load_settings(config_path)
    register_custom_metrics(file)  # its [custom_metrics], for --metric NAME and the labels' metrics
    given = from_flags(flags)
    # the file's settings calibrate takes (not its [columns]: eval's data's columns), under the flags
    settings = RunSettings(**{k: getattr(file, k) for k in FROM_FILE}).over(given, "flags")
    check_outputs([*files, file.config, *files_read(settings)], out=out, md=md, html=html, fit=fit_path)
    if family is not None:
        _fit_family(family, files, settings, fit_path=fit_path, out=out, md=md, html=html, metric=metric)
        sys.exit(0)
    if metric:
        get_metrics([metric])
    for name, opts in settings.metric_options.items():
        get_metrics([name], {name: opts})  # a bad option is refused before a model loads
    sources = [read_labelled(f, any_metric=bool(metric), max_input_bytes=settings.max_input_bytes,
                             columns=settings.columns) for f in files]  # refused before a model loads
    judge_obj = get_judge(settings.judge, settings.judge_options)
    try:
        run = calibrate(sources, judge_obj, settings=settings, metric=metric,
                        judge_options=run_options(settings.judge_options))  # the judge is built with the others
    finally:
        judge_obj.close()
    write_calibration(run, out, md, fit=bool(fit_path), html_path=html)
    print_calibration(run, fit=bool(fit_path))
    if fit_path:
        from ..prompts.overrides import load_overrides  # noqa: PLC0415
        from ..quality.calibration_fit import fit_calibration  # noqa: PLC0415

        asked = load_overrides(dict(settings.prompts)) if settings.prompts else None  # as the run asked them
        fitted, fits = fit_calibration(run, judge_obj, asked)
        fitted.write(fit_path)
        for f in fits:
            click.echo("fitted " + printable(f.text()))
    if out or md or html or fit_path:
        click.echo("wrote " + printable(", ".join(str(p) for p in (out, md, html, fit_path) if p)))
    sys.exit(0)


def _fit_family(family, files, settings, *, fit_path, out, md, html, metric) -> None:
    """--family: one prompt family fitted on the rows of one labelled file and added to --fit FILE
    (localragas.quality.answerable_fit); --out writes each row's raw P(yes)."""
    import json  # noqa: PLC0415

    from ..core.atomic_write import write_atomic  # noqa: PLC0415
    from ..core.errors import ConfigError  # noqa: PLC0415
    from ..judges import get_judge  # noqa: PLC0415
    from ..quality.answerable_fit import FAMILIES, fit_answerable  # noqa: PLC0415
    from ..quality.labelled import read_labelled  # noqa: PLC0415
    from ..run.judging_context import run_judging  # noqa: PLC0415

    if family not in FAMILIES:
        raise ConfigError(f"--family {family!r}: not a family to fit; valid: {', '.join(FAMILIES)}")
    if fit_path is None or len(files) != 1:
        raise ConfigError("--family needs --fit FILE" if fit_path is None else "--family fits one LABELLED file")
    refused = [flag for flag, given in (("--metric", metric), ("--md", md), ("--html", html)) if given]
    if refused:
        raise ConfigError(f"--family fits a prompt family, not a metric: {refused[0]} does not apply")
    source = read_labelled(files[0], any_metric=True, max_input_bytes=settings.max_input_bytes,
                           columns=settings.columns)
    judge_obj = get_judge(settings.judge, settings.judge_options)
    try:
        judging = run_judging(judge_obj, {"calibration": "none"}, settings.prompts)  # raw P(yes)
        with judging.cached(settings.cache, settings.cache_dir if settings.cache else None):
            run = fit_answerable(source, judging, fit_path, settings.limit, settings.progress)
    finally:
        judge_obj.close()
    for line in run.lines():
        click.echo(printable(line))
    click.echo("fitted " + printable(run.fit.text()) + printable(f", added to {fit_path}"))
    if out:
        write_atomic(out, json.dumps(run.document(), indent=1) + "\n")
        click.echo("wrote " + printable(str(out)))


def _fit_labels(labels_files, report_path, data_path, *, fit_path, files, refused) -> None:
    """--labels/--report: a calibration map fitted on people's labels of a run's items, cross-fitted
    (localragas.quality.labels_fit), written to --fit FILE."""
    from ..core.errors import ConfigError  # noqa: PLC0415
    from ..quality.labels_fit import fit_from_labels  # noqa: PLC0415
    from ..quality.spot_checks import read_label_files  # noqa: PLC0415
    from ..report.json_report import read_json  # noqa: PLC0415

    if fit_path is None or not labels_files or report_path is None:
        raise ConfigError("--labels and --report fit a calibration from people's labels of a run: give --fit FILE "
                          "--labels LABELS.jsonl --report RUN.json together")
    if files:
        raise ConfigError("--labels/--report fit from a run's labelled items: LABELLED files do not apply with them")
    given = [flag for flag, value in refused if value]
    if given:
        raise ConfigError(f"--labels/--report fit a calibration from a run's labels: {given[0]} does not apply")
    check_outputs([*labels_files, report_path, data_path], fit=fit_path)
    report = read_json(report_path)
    fitted, fits, crossed = fit_from_labels(report, read_label_files(labels_files), labels_files=list(labels_files),
                                            report_path=report_path, data_path=data_path)
    for f, c in zip(fits, crossed):
        click.echo("fitted " + printable(f.text()))
        for line in c.lines():
            click.echo(printable(line))
    fitted.write(fit_path)
    click.echo("wrote " + printable(str(fit_path)))
