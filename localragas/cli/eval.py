"""`localragas eval`: a data file scored and gated (added to the command group in localragas.cli, whose one
error-to-exit mapping it runs through)."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from ..core.printable import printable
from ..run.settings import EvalIO, flagged
from .options import SectionedCommand, SectionedOption, ragas_names_option, setting_options
from .output import check_outputs, gate_exit, note_checkpoint, tracked_exit, write_and_print


@click.command("eval", cls=SectionedCommand)  # --help by section: Flag.section of each setting, section= of the rest
@click.argument("data", required=False, type=click.Path(path_type=Path))
@setting_options(*flagged())  # the run's settings: options made from their declaration (run/settings.py)
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), cls=SectionedOption,
              section="Input", help="Settings file (default: ./localragas.toml, else [tool.localragas] in "
                                    "./pyproject.toml).")
@click.option("--eval", "eval_name", metavar="NAME", cls=SectionedOption, section="Input",
              help="Run the settings file's [evals.NAME] table: its keys over the file's top-level keys.")
@setting_options(*flagged(EvalIO))  # the reports and MLflow: declared with the file's keys (run/settings.py EvalIO)
@ragas_names_option
def eval_cmd(data, config_path, eval_name, ragas_names, **flags):
    """Evaluate the samples in DATA (.jsonl, .json, .csv, .parquet, or a folder written by the datasets package's
    save_to_disk; ragas column names are read too) and apply the quality gate. Without DATA: the settings file's
    `data` (a whole eval in localragas.toml: data, metrics, columns, reports; docs/config-file.md).

    \b
    Example:
      localragas eval examples/rag_samples.jsonl --out report.json --csv scores.csv
      localragas eval --eval nightly
    """
    from ..run.evaluation import Evaluation, eval_from_flags  # noqa: PLC0415
    from ..run.files_read import files_read  # noqa: PLC0415

    spec, io = eval_from_flags(data, config=config_path, eval=eval_name, **flags)
    check_outputs([spec.data, *files_read(spec)], **io.reports())  # every file the run reads is an input
    if io.mlflow:  # a missing package, or a store that cannot be opened, stops the run before any judging
        from ..integrations.mlflow import check_store  # noqa: PLC0415

        check_store()
    run = Evaluation(spec)
    try:  # its checkpoint is held until the reports are written: another live run of it is refused, not resumed
        report = run.run()
        if report.meta["resumed_samples"]:
            click.echo(f"resumed: {report.meta['resumed_samples']} finished sample(s) taken from "
                       f"{printable(run.checkpoint.path)}", err=True)
        write_and_print(report, ragas_names, **io.reports())
        run.record(report, {("json" if k == "out" else k): v for k, v in io.reports().items()})
        run.finish()  # the run is complete and its reports are written
    finally:
        note_checkpoint(run.checkpoint)  # named by an internal error's message while it holds finished samples
        run.close()
    sys.exit(tracked_exit(report, io, eval_name) if io.mlflow else gate_exit(report))
