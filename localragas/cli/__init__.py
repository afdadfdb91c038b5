"""The command line: a thin layer over the library.

Exit codes: 0 gate passed, 1 gate failed, 2 bad usage or input, 3 internal error (a bug: the traceback is printed),
4 could not evaluate (errors left samples unscored beyond --max-error-rate: the gate fails closed; generate: a judge
error stopped the run; run-rag: some rows failed), 5 judge check failed (the judge cannot tell obvious supported from
unsupported statements: nothing was scored).
"""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from .. import __version__
from .calibrate import calibrate_cmd
from .generate import generate_cmd, run_rag_cmd
from .inventory import cache_group, metrics_cmd, models_group
from .options import (EXIT_BAD_INPUT, EXIT_GATE_FAILED, EXIT_INTERNAL_ERROR,  # noqa: F401 - tests import them
                          EXIT_JUDGE_CHECK_FAILED, EXIT_NOT_EVALUATED, format_options, ragas_names_option,
                          setting_options)
from .output import check_outputs, gate_exit, write_and_print
from .reports import compare_cmd, merge_cmd, report_cmd
from ..core.errors import JudgeCheckError, LocalragasError, environment_message
from ..core.printable import printable
from ..run.settings import flagged


def _errors_to_exit(fn):
    """JudgeCheckError (the judge cannot judge) -> its message and exit code 5; LocalragasError -> a one-line message
    and exit code 2; an OSError (permission, missing folder, read-only file system, full disk…) -> the path, the
    problem and what to do, exit code 2; any other exception (a bug) -> its traceback and exit code 3. The only
    place errors become exit codes: every command runs through it (_Main)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except JudgeCheckError as e:
            click.echo(f"Error: {printable(e)}", err=True)
            sys.exit(EXIT_JUDGE_CHECK_FAILED)
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


class _Main(click.Group):
    """The command group: every command, in every subgroup, runs through the one error-to-exit mapping."""

    def invoke(self, ctx: click.Context):
        return _errors_to_exit(super().invoke)(ctx)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="localragas")
def main() -> None:
    """Score RAG outputs with the RAGAS metrics, fully offline, with a local judge model."""


for _command in (metrics_cmd, cache_group, models_group,  # localragas/cli/inventory.py
                 generate_cmd, run_rag_cmd,  # localragas/cli/generate.py
                 report_cmd, merge_cmd, compare_cmd,  # localragas/cli/reports.py
                 calibrate_cmd):  # localragas/cli/calibrate.py
    main.add_command(_command)


@main.command("eval")
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


if __name__ == "__main__":  # pragma: no cover
    main()
