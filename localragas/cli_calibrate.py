"""`localragas calibrate`: how well a metric agrees with human labels (localragas.quality.calibration), and with --fit a
calibration map fitted (localragas.quality.calibration_fit). Added to the command group in localragas.cli, whose one
error-to-exit mapping it runs through."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from .cli_options import max_input_bytes_option, model_options, prompt_option
from .cli_output import check_outputs
from .core.printable import printable


@click.command("calibrate")
@click.argument("files", metavar="LABELLED.jsonl...", nargs=-1, required=True,
                type=click.Path(dir_okay=False, path_type=Path))
@model_options
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
@click.option("--family", metavar="FAMILY",
              help="With --fit: fit this prompt family instead of the metrics' and add it to FILE, its other families "
                   "kept. question_answerable: generate's answerability check, each row's question and contexts "
                   "against its binary label (docs/calibration.md).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show progress on stderr.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Persistent judge cache folder (default .localragas/cache, or $LOCALRAGAS_STATE_DIR/cache).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the judge cache.")
@click.option("--resume/--no-resume", default=True, show_default=True,
              help="Keep finished rows in a checkpoint under .localragas/runs, as `eval` does.")
@click.option("--columns", multiple=True, metavar="FIELD=COLUMN[,FIELD=COLUMN]",
              help="Read a sample field from a column of another name, e.g. question=query. Repeatable.")
@max_input_bytes_option
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./localragas.toml, else [tool.localragas] in ./pyproject.toml): its judge, "
                   "judge_options, embedder, thresholds, metric_options and max_input_bytes, under the flags.")
@prompt_option
def calibrate_cmd(files, judge, judge_option, embedder, threshold, metric, metric_option, limit, out, md, fit_path,
                  family, progress, cache_dir, no_cache, resume, columns, max_input_bytes, config_path, prompt):
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
    """
    from .quality.calibration import calibrate  # noqa: PLC0415
    from .run.config import load_settings  # noqa: PLC0415
    from .run.evaluation import cache_folder, layered  # noqa: PLC0415
    from .judges import get_judge  # noqa: PLC0415
    from .core.key_values import parse_columns  # noqa: PLC0415
    from .quality.labelled import read_labelled  # noqa: PLC0415
    from .metrics import get_metrics  # noqa: PLC0415
    from .report.calibration import print_calibration, write_calibration  # noqa: PLC0415
    from .judges.calibrated import run_options  # noqa: PLC0415

    settings = load_settings(config_path)
    chosen = layered(settings, judge=judge, judge_option=judge_option, embedder=embedder, threshold=threshold,
                     metric_option=metric_option, max_input_bytes=max_input_bytes, prompt=prompt)
    check_outputs([*files, settings.source, cache_folder(not no_cache, cache_dir)], out=out, md=md, fit=fit_path)
    if family is not None:
        _fit_family(family, files, chosen, fit_path=fit_path, out=out, md=md, metric=metric, limit=limit,
                    progress=progress, cache=not no_cache, cache_dir=cache_dir, columns=columns)
        sys.exit(0)
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
        run = calibrate(sources, judge_obj, chosen["embedder"], metric=metric, limit=limit,
                        thresholds=chosen["thresholds"], cache=not no_cache, cache_dir=None if no_cache else cache_dir,
                        resume=resume, progress=progress, metric_options=metric_options,
                        judge_options=run_options(chosen["judge_options"]), prompts=chosen["prompts"])
    finally:
        judge_obj.close()
    write_calibration(run, out, md, fit=bool(fit_path))
    print_calibration(run, fit=bool(fit_path))
    if fit_path:
        from .prompts.overrides import load_overrides  # noqa: PLC0415
        from .quality.calibration_fit import fit_calibration  # noqa: PLC0415

        asked = load_overrides(dict(chosen["prompts"])) if chosen["prompts"] else None  # as the run asked them
        fitted, fits = fit_calibration(run, judge_obj, asked)
        fitted.write(fit_path)
        for f in fits:
            click.echo("fitted " + printable(f.text()))
    if out or md or fit_path:
        click.echo("wrote " + printable(", ".join(str(p) for p in (out, md, fit_path) if p)))
    sys.exit(0)


def _fit_family(family, files, chosen, *, fit_path, out, md, metric, limit, progress, cache, cache_dir,
                columns) -> None:
    """--family: one prompt family fitted on the rows of one labelled file and added to --fit FILE
    (localragas.quality.answerable_fit); --out writes each row's raw P(yes)."""
    import json  # noqa: PLC0415

    from .core.atomic_write import write_atomic  # noqa: PLC0415
    from .core.errors import ConfigError  # noqa: PLC0415
    from .core.key_values import parse_columns  # noqa: PLC0415
    from .judges import get_judge  # noqa: PLC0415
    from .quality.answerable_fit import FAMILIES, fit_answerable  # noqa: PLC0415
    from .quality.labelled import read_labelled  # noqa: PLC0415
    from .run.runner import check_cache_choice, run_judging  # noqa: PLC0415

    if family not in FAMILIES:
        raise ConfigError(f"--family {family!r}: not a family to fit; valid: {', '.join(FAMILIES)}")
    if fit_path is None or len(files) != 1:
        raise ConfigError("--family needs --fit FILE" if fit_path is None else "--family fits one LABELLED file")
    refused = [flag for flag, given in (("--metric", metric), ("--md", md)) if given]
    if refused:
        raise ConfigError(f"--family fits a prompt family, not a metric: {refused[0]} does not apply")
    source = read_labelled(files[0], any_metric=True, max_input_bytes=chosen["max_input_bytes"],
                           columns=parse_columns(columns, "--columns"))
    check_cache_choice(cache, cache_dir)
    judge_obj = get_judge(chosen["judge"], chosen["judge_options"])
    try:
        judging = run_judging(judge_obj, {"calibration": "none"}, chosen["prompts"])  # raw P(yes)
        with judging.cached(cache, cache_dir):
            run = fit_answerable(source, judging, fit_path, limit, progress)
    finally:
        judge_obj.close()
    for line in run.lines():
        click.echo(printable(line))
    click.echo("fitted " + printable(run.fit.text()) + printable(f", added to {fit_path}"))
    if out:
        write_atomic(out, json.dumps(run.document(), indent=1) + "\n")
        click.echo("wrote " + printable(str(out)))
