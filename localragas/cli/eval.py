"""`localragas eval`: a data file scored and gated (added to the command group in localragas.cli, whose one
error-to-exit mapping it runs through)."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from ..core.printable import printable
from ..run.settings import flagged
from .options import format_options, ragas_names_option, setting_options
from .output import check_outputs, gate_exit, write_and_print


@click.command("eval")
@click.argument("data", type=click.Path(path_type=Path))
@setting_options(*flagged())  # the run's settings: options made from their declaration (run/settings.py)
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./localragas.toml, else [tool.localragas] in ./pyproject.toml).")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the full JSON report (scores, evidence, run metadata) here.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write per-sample scores as CSV here.")
@format_options
@ragas_names_option
def eval_cmd(data, config_path, out, csv_path, html, md, junit, ragas_names, **flags):
    """Evaluate the samples in DATA (.jsonl, .json, .csv, .parquet, or a folder written by the datasets package's
    save_to_disk; ragas column names are read too) and apply the quality gate.

    \b
    Example:
      localragas eval examples/rag_samples.jsonl --out report.json --csv scores.csv
    """
    from ..run.evaluation import Evaluation, spec_from_flags  # noqa: PLC0415

    spec = spec_from_flags(data, config=config_path, **flags)
    check_outputs([data, spec.config, spec.cache_folder()], out=out, csv=csv_path, html=html, md=md, junit=junit)
    run = Evaluation(spec)
    try:  # its checkpoint is held until the reports are written: another live run of it is refused, not resumed
        report = run.run()
        if report.meta["resumed_samples"]:
            click.echo(f"resumed: {report.meta['resumed_samples']} finished sample(s) taken from "
                       f"{printable(run.checkpoint.path)}", err=True)
        write_and_print(report, ragas_names, out=out, csv=csv_path, html=html, md=md, junit=junit)
        run.finish()  # the run is complete and its reports are written
    finally:
        run.close()
    sys.exit(gate_exit(report))
